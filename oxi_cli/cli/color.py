"""The colour commands: cdl, lut3d and matrix."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from oxi_cli.batch.options import BatchOptions
from oxi_cli.cli.common import PathsArg, chain_of, job_command, run_command

CDL_EPILOG = """\b
Examples:
  oxi cdl plate.exr graded.exr --slope 1.1,1.0,0.9 --offset 0.01 --power 1.2 --sat 0.9
  oxi cdl plate.exr graded.exr --cdl shot.ccc --id sh010
  oxi cdl plate.exr graded.exr --cdl look.cc --sat 1.1 --style asc
  oxi cdl shots/ -o graded/ --cdl look.cc --jobs 2 --skip-existing
  oxi cdl 'plate.####.exr' -o 'graded.####.exr' --frames 1001-1100 --cdl look.cc
\b
noclamp (default, OCIO CDL_NO_CLAMP): v = in*slope+offset; v**power where v > 0; sat around Rec.709 luma.
asc (OCIO CDL_ASC): the same with v clamped to [0, 1] before the power and after the saturation.
With no --cdl and no value oxi refuses (use `oxi run IN OUT` to copy); a .ccc/.cdl holding several corrections
needs --id (the error lists the ids). Values must be finite and within float32 (±3.4e38).
"""


@job_command
def cdl(
    paths: PathsArg,
    slope: Annotated[str | None, typer.Option(help="R,G,B or one number for all.")] = None,
    offset: Annotated[str | None, typer.Option(help="R,G,B or one number for all.")] = None,
    power: Annotated[str | None, typer.Option(help="R,G,B or one number for all (> 0).")] = None,
    sat: Annotated[float | None, typer.Option(help="Saturation (Rec.709 luma weights).")] = None,
    cdl_file: Annotated[
        Path | None, typer.Option("--cdl", help="ASC CDL file: .cc, .ccc or .cdl. Flags above override it.")
    ] = None,
    cc_id: Annotated[
        str | None,
        typer.Option("--id", help="Correction id (or 0-based index) in a .ccc / .cdl; needed when it holds several."),
    ] = None,
    style: Annotated[str, typer.Option(help="noclamp (scene-linear safe) or asc (clamps to 0..1).")] = "noclamp",
    *,
    opts: BatchOptions,
) -> None:
    """Apply an ASC CDL (slope, offset, power, saturation), with the maths of OpenColorIO."""

    def build() -> object:
        from oxi_cli.errors import UsageError
        from oxi_cli.recipe import build_cdl

        if cdl_file is None and all(v is None for v in (slope, offset, power, sat)):
            raise UsageError(
                "cdl needs --cdl FILE or at least one of --slope, --offset, --power, --sat "
                "(to copy or re-encode a file, use `oxi run IN OUT`)"
            )
        op = build_cdl(file=cdl_file, cc_id=cc_id, style=style, slope=slope, offset=offset, power=power, sat=sat)
        return chain_of([op], cdl_file)

    run_command(paths, opts, build)


LUT_EPILOG = """\b
Examples:
  oxi lut3d plate.exr look.exr --lut show.cube
  oxi lut3d plate.exr look.exr --lut film.3dl --interp trilinear
  oxi lut3d 'shots/*.exr' -o looks/ --name '{stem}_look{ext}' --lut show.cube
\b
Formats: .cube (Resolve and Iridas, DOMAIN_MIN/MAX, 1D shaper), .3dl, .spi3d, .spi1d; .clf and .ctf (read by
OpenColorIO, run as oxi ops). Index maths and clamping as OpenColorIO: inputs outside the LUT domain clamp to its
edge; NaN maps to the domain minimum.
"""


@job_command
def lut3d(
    paths: PathsArg,
    lut: Annotated[
        Path, typer.Option("--lut", help="LUT or transform file: .cube, .3dl, .spi3d, .spi1d, .clf or .ctf.",
                           show_default=False)
    ],
    interp: Annotated[str, typer.Option(help="tetrahedral (as OCIO BEST, oiiotool) or trilinear.")] = "tetrahedral",
    *,
    opts: BatchOptions,
) -> None:
    """Apply a 3D (or 1D) LUT file to R, G, B."""

    def build() -> object:
        from oxi_cli.recipe import build_lut

        return chain_of(build_lut(lut, interp), lut)

    run_command(paths, opts, build)


MATRIX_EPILOG = """\b
Examples:
  oxi matrix in.exr out.exr --matrix "0.6131,0.3395,0.0474,0.0702,0.9164,0.0134,0.0206,0.1096,0.8698"
  oxi matrix in.exr out.exr --matrix "1.2,0,0,0.01, 0,1.1,0,0, 0,0,0.9,-0.02"      # 3x4: last column adds
  oxi matrix in.exr out.exr --matrix "$(cat m44.txt)" --offset 0.01,0,0
  oxi matrix renders/ -o acescg/ --recursive --matrix "$(cat srgb_to_ap1.txt)"
\b
out = M · \\[r, g, b, a]ᵀ + offset, row-major, column vectors (OCIO MatrixTransform). 9 numbers: 3x3 on RGB;
12: 3x4; 16: 4x4 on RGBA (alpha taken as 1 if the image has none). oiiotool --ccmatrix is the transpose.
"""


@job_command
def matrix(
    paths: PathsArg,
    values: Annotated[
        str, typer.Option("--matrix", help="9, 12 or 16 numbers, row-major, comma-separated.", show_default=False)
    ],
    offset: Annotated[str | None, typer.Option(help="R,G,B[,A] added after the matrix.")] = None,
    *,
    opts: BatchOptions,
) -> None:
    """Multiply R, G, B (and alpha for 4x4) by a colour matrix."""

    def build() -> object:
        from oxi_cli.recipe import build_matrix

        return chain_of([build_matrix(values, offset)])

    run_command(paths, opts, build)
