"""3D LUT with trilinear or tetrahedral interpolation over an input domain (as OCIO's Lut3D)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from oxi_cli.errors import OpError, UsageError
from oxi_cli.ops.base import ColorOp, Encoded, freeze_lut, lut_domain
from oxi_cli.ops.codes import LUT3D_TETRAHEDRAL, LUT3D_TRILINEAR
from oxi_cli.ops.step import Param, Step, StepArgs, choices

if TYPE_CHECKING:
    import numpy as np  # annotations only: numpy loads when a function here runs, not for `oxi --help`

Interp = Literal["tetrahedral", "trilinear"]
INTERPOLATIONS = ("tetrahedral", "trilinear")
MIN_SIZE, MAX_SIZE = 2, 256


@dataclass(frozen=True, eq=False)
class Lut3d(ColorOp):
    """table is (N, N, N, 3) float32 indexed [r, g, b]; inputs outside the domain clamp to its edge, NaN to min."""

    table: np.ndarray
    domain_min: tuple[float, float, float] = (0.0, 0.0, 0.0)
    domain_max: tuple[float, float, float] = (1.0, 1.0, 1.0)
    interp: Interp = "tetrahedral"
    name: ClassVar[str] = "lut3d"
    flops_per_pixel: ClassVar[int] = 60  # index, corner selects, 12 table reads

    def __post_init__(self) -> None:
        import numpy as np

        table = np.asarray(self.table, dtype=np.float32)
        n = table.shape[0] if table.ndim == 4 else -1
        if table.ndim != 4 or table.shape != (n, n, n, 3):
            raise OpError(f"3D LUT table must be (N, N, N, 3), got shape {table.shape}")
        if self.interp not in ("tetrahedral", "trilinear"):
            raise OpError(f"3D LUT interpolation must be tetrahedral or trilinear, got {self.interp!r}")
        freeze_lut(self, "3D LUT", table, n, MIN_SIZE, MAX_SIZE)

    @property
    def size(self) -> int:
        return int(self.table.shape[0])

    def encode(self, has_alpha: bool) -> Encoded:
        code = LUT3D_TETRAHEDRAL if self.interp == "tetrahedral" else LUT3D_TRILINEAR
        return Encoded(code, lut_domain(self), self.table)

    def table_bytes(self) -> int:
        return self.size**3 * 16

    @classmethod
    def from_red_fastest(cls, rows: np.ndarray, size: int, **kwargs: object) -> Lut3d:
        """Build from file rows in .cube order (red changes fastest, blue slowest)."""
        import numpy as np

        rows = np.asarray(rows, dtype=np.float32)
        if rows.shape != (size**3, 3):
            raise OpError(f"3D LUT of size {size} needs {size**3} rows of 3 numbers, got {rows.shape[0]}")
        table = rows.reshape(size, size, size, 3).transpose(2, 1, 0, 3)
        return cls(table, **kwargs)  # type: ignore[arg-type]


def _build(args: StepArgs) -> list[ColorOp]:
    """Every op the file means, in order (a .cube's 1D shaper first; a CLF's nodes)."""
    path = args.path("file")
    if path is None:
        raise UsageError(f"lut3d needs {args.label('file')} FILE (a LUT or transform file)")
    return args.files.lut(path, args.choice("interp", INTERPOLATIONS))


STEP = Step(
    "lut3d",
    summary="Apply a 3D (or 1D) LUT file, or a CLF/CTF transform, to R, G, B.",
    value=Param("file", "LUT or transform file: .cube, .3dl, .spi3d, .spi1d, .clf or .ctf.", option="--lut",
                metavar="FILE"),
    params=(Param("interp", "tetrahedral (as OCIO BEST, oiiotool) or trilinear.", default="tetrahedral",
                  complete=choices(*INTERPOLATIONS)),),
    build=_build,
    run_help="3D/1D LUT or CLF/CTF transform file (or --lut)",
    aliases=("lut",),
    examples="""\b
Examples:
  oxi lut3d plate.exr look.exr --lut show.cube
  oxi lut3d plate.exr look.exr --lut film.3dl --interp trilinear
  oxi lut3d 'shots/*.exr' -o looks/ --name '{stem}_look{ext}' --lut show.cube
  oxi lut3d cg.exr look.exr --lut show.cube --unpremult      # a premultiplied CG render with alpha
\b
Formats: .cube (Resolve and Iridas, DOMAIN_MIN/MAX, 1D shaper), .3dl, .spi3d, .spi1d; .clf and .ctf (read by
OpenColorIO, run as oxi ops). Index maths and clamping as OpenColorIO: inputs outside the LUT domain clamp to its
edge; NaN maps to the domain minimum.
""",
)
