"""The spatial commands: resize and blur."""

from __future__ import annotations

from typing import Annotated

import typer

from oxi_cli.cli import parse
from oxi_cli.cli.common import (
    BackendOpt,
    CompressionOpt,
    DebugOpt,
    DeviceOpt,
    InArg,
    InPlaceOpt,
    JobOptions,
    OutArg,
    OutTypeOpt,
    QuietOpt,
    ThreadsOpt,
    run_job,
)

RESIZE_EPILOG = """\b
Examples:
  oxi resize plate.exr proxy.exr --size 1920x1080
  oxi resize plate.exr half.exr --scale 0.5 --filter catmull-rom
  oxi resize plate.exr thumb.png --width 512                 # height keeps the aspect ratio
\b
As oiiotool: output x samples source (x + 0.5) * srcW / dstW - 0.5; shrinking stretches the filter by the
ratio; weights are normalised and edges clamp. Negative lobes can make negatives near HDR edges (not clamped).
"""


def resize(
    src: InArg,
    dst: OutArg,
    width: Annotated[int | None, typer.Option(help="Output width; height keeps the aspect.")] = None,
    height: Annotated[int | None, typer.Option(help="Output height; width keeps the aspect.")] = None,
    size: Annotated[str | None, typer.Option(help="Output WIDTHxHEIGHT, e.g. 1920x1080.")] = None,
    scale: Annotated[float | None, typer.Option(help="Scale factor for both sides, e.g. 0.5.")] = None,
    filter: Annotated[
        str, typer.Option(help="lanczos3, catmull-rom, mitchell, triangle or box.")
    ] = "lanczos3",
    backend: BackendOpt = None,
    device: DeviceOpt = None,
    threads: ThreadsOpt = None,
    out_type: OutTypeOpt = "same",
    compression: CompressionOpt = None,
    in_place: InPlaceOpt = False,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Resize every channel with a separable filter."""
    opts = JobOptions(backend, device, threads, out_type, compression, in_place, debug, quiet)

    def build(spec) -> list:
        from oxi_cli.errors import UsageError
        from oxi_cli.ops import Resize

        given = [n for n, v in (("--width", width), ("--height", height), ("--size", size), ("--scale", scale))
                 if v is not None]
        if len(given) != 1:
            raise UsageError(f"resize needs exactly one of --width, --height, --size, --scale (got {given or 'none'})")
        for name, value in (("--width", width), ("--height", height)):
            if value is not None and value < 1:
                raise UsageError(f"{name} must be at least 1, got {value}")
        w, h = parse.size(size) if size is not None else (width, height)
        out_w, out_h = Resize.resolve_size(spec.width, spec.height, w, h, scale)
        return [Resize(out_w, out_h, filter)]  # type: ignore[arg-type]

    run_job(build, src, dst, opts)


BLUR_EPILOG = """\b
Examples:
  oxi blur plate.exr soft.exr --sigma 2.25
  oxi blur plate.exr soft.exr --radius 9        # sigma = 3
\b
Gaussian of standard deviation sigma pixels, taps -R..R with R = ceil(3 sigma), normalised, edges clamp.
(oiiotool --blur W is sigma = W/4; libvips gaussblur cuts its mask near 1.8 sigma: the tools differ.)
"""


def blur(
    src: InArg,
    dst: OutArg,
    sigma: Annotated[float | None, typer.Option(help="Standard deviation in pixels.")] = None,
    radius: Annotated[float | None, typer.Option(help="Kernel reach in pixels; sigma = radius / 3.")] = None,
    backend: BackendOpt = None,
    device: DeviceOpt = None,
    threads: ThreadsOpt = None,
    out_type: OutTypeOpt = "same",
    compression: CompressionOpt = None,
    in_place: InPlaceOpt = False,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Gaussian blur on every channel."""
    opts = JobOptions(backend, device, threads, out_type, compression, in_place, debug, quiet)

    def build(_spec: object) -> list:
        from oxi_cli.errors import UsageError
        from oxi_cli.ops import Blur

        if (sigma is None) == (radius is None):
            raise UsageError("blur needs exactly one of --sigma or --radius")
        return [Blur(sigma) if sigma is not None else Blur.from_radius(radius)]  # type: ignore[arg-type]

    run_job(build, src, dst, opts)
