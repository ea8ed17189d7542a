"""The colour commands: cdl, lut3d and matrix."""

from __future__ import annotations

from pathlib import Path
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

CDL_EPILOG = """\b
Examples:
  oxi cdl plate.exr graded.exr --slope 1.1,1.0,0.9 --offset 0.01 --power 1.2 --sat 0.9
  oxi cdl plate.exr graded.exr --cdl shot.ccc --id sh010
  oxi cdl plate.exr graded.exr --cdl look.cc --sat 1.1 --style asc
\b
noclamp (default, OCIO CDL_NO_CLAMP): v = in*slope+offset; v**power where v > 0; sat around Rec.709 luma.
asc (OCIO CDL_ASC): the same with v clamped to [0, 1] before the power and after the saturation.
"""


def cdl(
    src: InArg,
    dst: OutArg,
    slope: Annotated[str | None, typer.Option(help="R,G,B or one number for all.")] = None,
    offset: Annotated[str | None, typer.Option(help="R,G,B or one number for all.")] = None,
    power: Annotated[str | None, typer.Option(help="R,G,B or one number for all (> 0).")] = None,
    sat: Annotated[float | None, typer.Option(help="Saturation (Rec.709 luma weights).")] = None,
    cdl_file: Annotated[
        Path | None, typer.Option("--cdl", help="ASC CDL file: .cc, .ccc or .cdl. Flags above override it.")
    ] = None,
    cc_id: Annotated[str | None, typer.Option("--id", help="Correction id within a .ccc / .cdl.")] = None,
    style: Annotated[str, typer.Option(help="noclamp (scene-linear safe) or asc (clamps to 0..1).")] = "noclamp",
    backend: BackendOpt = None,
    device: DeviceOpt = None,
    threads: ThreadsOpt = None,
    out_type: OutTypeOpt = "same",
    compression: CompressionOpt = None,
    in_place: InPlaceOpt = False,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Apply an ASC CDL (slope, offset, power, saturation), with the maths of OpenColorIO."""
    opts = JobOptions(backend, device, threads, out_type, compression, in_place, debug, quiet)

    def build(_spec: object) -> list:
        from oxi_cli.errors import UsageError
        from oxi_cli.ops import Cdl

        base = Cdl(style=style)  # type: ignore[arg-type]
        if cdl_file is not None:
            from oxi_cli.formats.registry import load_cdl

            base = load_cdl(cdl_file, cc_id, style)
        elif cc_id is not None:
            raise UsageError("--id picks a correction inside a --cdl file; pass --cdl too")
        return [
            Cdl(
                slope=parse.triple("--slope", slope) if slope is not None else base.slope,
                offset=parse.triple("--offset", offset) if offset is not None else base.offset,
                power=parse.triple("--power", power) if power is not None else base.power,
                sat=sat if sat is not None else base.sat,
                style=style,  # type: ignore[arg-type]
            )
        ]

    run_job(build, src, dst, opts)


LUT_EPILOG = """\b
Examples:
  oxi lut3d plate.exr look.exr --lut show.cube
  oxi lut3d plate.exr look.exr --lut film.3dl --interp trilinear
\b
Formats: .cube (Resolve and Iridas, DOMAIN_MIN/MAX, 1D shaper), .3dl, .spi3d, .spi1d. Index maths and
clamping as OpenColorIO: inputs outside the LUT domain clamp to its edge; NaN maps to the domain minimum.
"""


def lut3d(
    src: InArg,
    dst: OutArg,
    lut: Annotated[Path, typer.Option("--lut", help="LUT file: .cube, .3dl, .spi3d or .spi1d.", show_default=False)],
    interp: Annotated[str, typer.Option(help="tetrahedral (as OCIO BEST, oiiotool) or trilinear.")] = "tetrahedral",
    backend: BackendOpt = None,
    device: DeviceOpt = None,
    threads: ThreadsOpt = None,
    out_type: OutTypeOpt = "same",
    compression: CompressionOpt = None,
    in_place: InPlaceOpt = False,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Apply a 3D (or 1D) LUT file to R, G, B."""
    opts = JobOptions(backend, device, threads, out_type, compression, in_place, debug, quiet)

    def build(_spec: object) -> list:
        from oxi_cli.errors import UsageError
        from oxi_cli.formats.registry import load_lut

        if interp not in ("tetrahedral", "trilinear"):
            raise UsageError(f"--interp must be tetrahedral or trilinear, got {interp!r}")
        return list(load_lut(lut, interp))

    run_job(build, src, dst, opts)


MATRIX_EPILOG = """\b
Examples:
  oxi matrix in.exr out.exr --matrix "0.6131,0.3395,0.0474,0.0702,0.9164,0.0134,0.0206,0.1096,0.8698"
  oxi matrix in.exr out.exr --matrix "1.2,0,0,0.01, 0,1.1,0,0, 0,0,0.9,-0.02"      # 3x4: last column adds
  oxi matrix in.exr out.exr --matrix "$(cat m44.txt)" --offset 0.01,0,0
\b
out = M · [r, g, b, a]ᵀ + offset, row-major, column vectors (OCIO MatrixTransform). 9 numbers: 3x3 on RGB;
12: 3x4; 16: 4x4 on RGBA (alpha taken as 1 if the image has none). oiiotool --ccmatrix is the transpose.
"""


def matrix(
    src: InArg,
    dst: OutArg,
    values: Annotated[
        str, typer.Option("--matrix", help="9, 12 or 16 numbers, row-major, comma-separated.", show_default=False)
    ],
    offset: Annotated[str | None, typer.Option(help="R,G,B[,A] added after the matrix.")] = None,
    backend: BackendOpt = None,
    device: DeviceOpt = None,
    threads: ThreadsOpt = None,
    out_type: OutTypeOpt = "same",
    compression: CompressionOpt = None,
    in_place: InPlaceOpt = False,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Multiply R, G, B (and alpha for 4x4) by a colour matrix."""
    opts = JobOptions(backend, device, threads, out_type, compression, in_place, debug, quiet)

    def build(_spec: object) -> list:
        from oxi_cli.ops import Matrix

        m = parse.numbers("--matrix", values, (9, 12, 16))
        off = parse.numbers("--offset", offset, (3, 4)) if offset is not None else None
        return [Matrix.from_values(m, off)]

    run_job(build, src, dst, opts)
