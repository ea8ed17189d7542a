"""The spatial commands: resize and blur."""

from __future__ import annotations

from typing import Annotated

import typer

from oxi_cli.batch.options import BatchOptions
from oxi_cli.cli import parse
from oxi_cli.cli.common import PathsArg, chain_of, job_command, run_chain

RESIZE_EPILOG = """\b
Examples:
  oxi resize plate.exr proxy.exr --size 1920x1080
  oxi resize plate.exr half.exr --scale 0.5 --filter catmull-rom
  oxi resize plate.exr thumb.png --width 512                 # height keeps the aspect ratio
  oxi resize 'plate.%04d.exr' -o proxies/ --frames 1001-1100x2 --size 1920x1080 --jobs 4
\b
As oiiotool: output x samples source (x + 0.5) * srcW / dstW - 0.5; shrinking stretches the filter by the
ratio; weights are normalised and edges clamp. Negative lobes can make negatives near HDR edges (not clamped).
"""


@job_command
def resize(
    paths: PathsArg,
    width: Annotated[int | None, typer.Option(help="Output width; height keeps the aspect.")] = None,
    height: Annotated[int | None, typer.Option(help="Output height; width keeps the aspect.")] = None,
    size: Annotated[str | None, typer.Option(help="Output WIDTHxHEIGHT, e.g. 1920x1080.")] = None,
    scale: Annotated[float | None, typer.Option(help="Scale factor for both sides, e.g. 0.5.")] = None,
    filter: Annotated[str, typer.Option(help="lanczos3, catmull-rom, mitchell, triangle or box.")] = "lanczos3",
    *,
    opts: BatchOptions,
) -> None:
    """Resize every channel with a separable filter."""

    def build() -> object:
        from oxi_cli.errors import UsageError
        from oxi_cli.recipe import Chain, ResizeStep

        given = [n for n, v in (("--width", width), ("--height", height), ("--size", size), ("--scale", scale))
                 if v is not None]
        if len(given) != 1:
            raise UsageError(f"resize needs exactly one of --width, --height, --size, --scale (got {given or 'none'})")
        for name, value in (("--width", width), ("--height", height)):
            if value is not None and value < 1:
                raise UsageError(f"{name} must be at least 1, got {value}")
        if scale is not None and not scale > 0:
            raise UsageError(f"--scale must be a positive number, got {scale}")
        w, h = parse.size(size) if size is not None else (width, height)
        return Chain(steps=[ResizeStep(w, h, scale, filter)])

    run_chain(paths, opts, build)


BLUR_EPILOG = """\b
Examples:
  oxi blur plate.exr soft.exr --sigma 2.25
  oxi blur plate.exr soft.exr --radius 9        # sigma = 3
  oxi blur shots/ -o soft/ --sigma 2 --continue-on-error --json > blur.jsonl
\b
Gaussian of standard deviation sigma pixels, taps -R..R with R = ceil(3 sigma), normalised, edges clamp.
(oiiotool --blur W is sigma = W/4; libvips gaussblur cuts its mask near 1.8 sigma: the tools differ.)
"""


@job_command
def blur(
    paths: PathsArg,
    sigma: Annotated[float | None, typer.Option(help="Standard deviation in pixels.")] = None,
    radius: Annotated[float | None, typer.Option(help="Kernel reach in pixels; sigma = radius / 3.")] = None,
    *,
    opts: BatchOptions,
) -> None:
    """Gaussian blur on every channel."""

    def build() -> object:
        from oxi_cli.recipe import build_blur

        return chain_of([build_blur(sigma, radius)])

    run_chain(paths, opts, build)
