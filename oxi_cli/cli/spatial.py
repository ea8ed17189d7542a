"""The spatial commands: resize and blur."""

from __future__ import annotations

from typing import Annotated

import typer

from oxi_cli.batch.options import BatchOptions
from oxi_cli.cli.common import PathsArg, chain_of, job_command, run_command

RESIZE_EPILOG = """\b
Examples:
  oxi resize plate.exr proxy.exr --size 1920x1080            # fits inside 1920x1080, aspect kept
  oxi resize plate.exr proxy.exr --size 1920x1080 --fit stretch   # exactly 1920x1080 (aspect changes)
  oxi resize plate.exr review.png --size 1920x1080 --fit pad       # 1920x1080, black bars (fill: no bars)
  oxi resize plate.exr half.exr --scale 50% --filter catmull-rom  # or --scale 0.5
  oxi resize plate.exr thumb.png --width 512                 # height keeps the aspect ratio
  oxi resize plate.exr hd.exr --size 0x1080                  # 0 keeps the aspect, as oiiotool
  oxi resize 'plate.%04d.exr' -o proxies/ --frames 1001-1100x2 --size 1920x1080 --jobs 4
\b
Sizes as oiiotool's --resize: WxH, Wx0 / 0xH (the 0 side keeps the aspect) or N% (a scale); --scale also
takes a factor (0.5). A bare number elsewhere is refused: is 50 a scale or a width? Write 50% or 50x0.
--fit for a WxH box, as oiiotool --fit: fit (default): the largest picture with the source's aspect inside the
box, centred (odd margins: the extra pixel below/right); an EXR gets the box as its display window and the
picture as its data window, no pixel invented; PNG, TIFF and JPEG keep no windows, so they get the box with
bars of 0, as oiiotool writes them. pad: the box's pixels, bars 0 in every channel (transparent black;
oiiotool --fit:pad=1). fill: the smallest picture that covers the box, the overflow cut evenly (oiiotool
--fit:fillmode=width|height, whichever overflows, with pad=1). stretch: exactly WxH, the aspect changes
(oxi's --size before --fit). A result over 8x the source or 32768 pixels a side needs --force.
As oiiotool: output x samples source (x + 0.5) * srcW / dstW - 0.5; shrinking stretches the filter by the
ratio; weights are normalised and edges clamp. Negative lobes can make negatives near HDR edges (not clamped).
"""


@job_command
def resize(
    paths: PathsArg,
    width: Annotated[int | None, typer.Option(help="Output width; height keeps the aspect.")] = None,
    height: Annotated[int | None, typer.Option(help="Output height; width keeps the aspect.")] = None,
    size: Annotated[
        str | None, typer.Option(help="1920x1080 (a box, see --fit), 1920x0 / 0x1080 (aspect kept) or 50%.")
    ] = None,
    scale: Annotated[str | None, typer.Option(help="Scale for both sides: 50% or 0.5.")] = None,
    fit: Annotated[
        str, typer.Option(help="For --size WxH: fit (aspect kept, windows as oiiotool --fit), pad (bars of 0), "
                          "fill (cover, crop the overflow) or stretch (exactly WxH).")
    ] = "fit",
    filter: Annotated[str, typer.Option(help="lanczos3, catmull-rom, mitchell, triangle or box.")] = "lanczos3",
    force: Annotated[bool, typer.Option("--force", help="Allow more than 8x or 32768 pixels a side.")] = False,
    *,
    opts: BatchOptions,
) -> None:
    """Resize every channel with a separable filter (sizes as oiiotool: 1920x1080, 1920x0, 50%)."""

    def build() -> object:
        from oxi_cli.errors import UsageError
        from oxi_cli.ops.resize import SizeSpec, parse_size
        from oxi_cli.recipe import Chain, ResizeStep

        given = [n for n, v in (("--width", width), ("--height", height), ("--size", size), ("--scale", scale))
                 if v is not None]
        if len(given) != 1:
            raise UsageError(f"resize needs exactly one of --width, --height, --size, --scale (got {given or 'none'})")
        for name, value in (("--width", width), ("--height", height)):
            if value is not None and not 1 <= value <= 1 << 20:
                raise UsageError(f"{name} must be 1..{1 << 20} pixels, got {value}")
        if size is not None:
            spec = parse_size(size, "--size")
        elif scale is not None:
            spec = parse_size(scale, "--scale", bare_is_scale=True)
        else:
            spec = SizeSpec(width or 0, height or 0)
        return Chain(steps=[ResizeStep(spec, filter, fit, force)])

    run_command(paths, opts, build)


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

    run_command(paths, opts, build)
