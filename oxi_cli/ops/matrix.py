"""Colour matrix: out = M · [r, g, b, a]ᵀ + offset, row-major, column-vector convention (as OCIO)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from oxi_cli.errors import OpError, UsageError
from oxi_cli.ops.base import ColorOp, Encoded, check_finite
from oxi_cli.ops.codes import MATRIX_RGB, MATRIX_RGBA, MATRIX_SCALE, MATRIX_SCALE_RGBA
from oxi_cli.ops.step import Param, Step, StepArgs

if TYPE_CHECKING:
    import numpy as np  # annotations only: numpy loads when a function here runs, not for `oxi --help`

IDENTITY16 = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)


@dataclass(frozen=True)
class Matrix(ColorOp):
    """A 4x4 matrix (row-major, 16 numbers) plus a 4-vector offset; alpha is 1 when the image has none."""

    m: tuple[float, ...] = IDENTITY16
    offset: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    name: ClassVar[str] = "matrix"

    def __post_init__(self) -> None:
        m = tuple(float(v) for v in self.m)
        off = tuple(float(v) for v in self.offset)
        if len(m) != 16:
            raise OpError(f"matrix needs 16 numbers internally, got {len(m)}")
        if len(off) == 3:
            off = (*off, 0.0)
        if len(off) != 4:
            raise OpError(f"matrix offset needs 3 or 4 numbers, got {len(off)}")
        check_finite("matrix", m)
        check_finite("matrix offset", off)
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "offset", off)

    @classmethod
    def from_values(cls, values: Sequence[float], offset: Sequence[float] | None = None) -> Matrix:
        """Build from 9 (3x3), 12 (3x4, last column is the offset) or 16 (4x4) row-major numbers."""
        import numpy as np

        vals = [float(v) for v in values]
        off = [0.0, 0.0, 0.0, 0.0]
        if len(vals) == 9:
            m = np.eye(4)
            m[:3, :3] = np.reshape(vals, (3, 3))
        elif len(vals) == 12:
            m34 = np.reshape(vals, (3, 4))
            m = np.eye(4)
            m[:3, :3] = m34[:, :3]
            off[:3] = m34[:, 3].tolist()
        elif len(vals) == 16:
            m = np.reshape(vals, (4, 4))
        else:
            raise OpError(f"--matrix needs 9, 12 or 16 numbers (row-major), got {len(vals)}")
        if offset is not None:
            extra = [float(v) for v in offset]
            if len(extra) not in (3, 4):
                raise OpError(f"--offset needs 3 or 4 numbers, got {len(extra)}")
            for i, v in enumerate(extra):
                off[i] += v
        return cls(tuple(m.ravel().tolist()), tuple(off))  # type: ignore[arg-type]

    @property
    def array(self) -> np.ndarray:
        import numpy as np

        return np.asarray(self.m, dtype=np.float64).reshape(4, 4)

    def touches_alpha(self) -> bool:
        """True when the alpha row or column is not the identity, so alpha must be read or written."""
        a = self.array
        return bool(a[3, 3] != 1.0 or a[3, :3].any() or a[:3, 3].any() or self.offset[3] != 0.0)

    def is_identity(self) -> bool:
        return self.m == IDENTITY16 and self.offset == (0.0, 0.0, 0.0, 0.0)

    def is_diagonal(self) -> bool:
        """Every coefficient off the diagonal is 0 (alpha's row and column included), as OCIO's isDiagonal."""
        return all(v == 0.0 for i, v in enumerate(self.m) if i % 5)

    def encode(self, has_alpha: bool) -> Encoded:
        # A matrix that leaves alpha alone must not route it through zero coefficients (0 * Inf = NaN). A
        # diagonal one scales each channel alone, as OCIO's Scale renderers: an Inf in red leaves green as is.
        rgba = has_alpha and self.touches_alpha()
        if self.is_diagonal():
            return Encoded(MATRIX_SCALE_RGBA if rgba else MATRIX_SCALE, [*self.m, *self.offset])
        return Encoded(MATRIX_RGBA if rgba else MATRIX_RGB, [*self.m, *self.offset])


def _build(args: StepArgs) -> list[Matrix]:
    values = args.numbers("values", (9, 12, 16))
    if values is None:
        raise UsageError(f"matrix needs {args.label('values')} with 9, 12 or 16 numbers")
    return [Matrix.from_values(values, args.numbers("offset", (3, 4)))]


STEP = Step(
    "matrix",
    summary="Multiply R, G, B (and alpha for 4x4) by a colour matrix.",
    value=Param("values", "9, 12 or 16 numbers, row-major, comma-separated.", option="--matrix", metavar="NUMBERS"),
    params=(Param("offset", "R,G,B[,A] added after the matrix."),),
    build=_build,
    run_help="9, 12 or 16 numbers, row-major (as `oxi matrix`)",
    examples="""\b
Examples:
  oxi matrix in.exr out.exr --matrix "0.6131,0.3395,0.0474,0.0702,0.9164,0.0134,0.0206,0.1096,0.8698"
  oxi matrix in.exr out.exr --matrix "1.2,0,0,0.01, 0,1.1,0,0, 0,0,0.9,-0.02"      # 3x4: last column adds
  oxi matrix in.exr out.exr --matrix "$(cat m44.txt)" --offset 0.01,0,0
  oxi matrix renders/ -o acescg/ --recursive --matrix "$(cat srgb_to_ap1.txt)"
\b
out = M · \\[r, g, b, a]ᵀ + offset, row-major, column vectors (OCIO MatrixTransform). 9 numbers: 3x3 on RGB;
12: 3x4; 16: 4x4 on RGBA (alpha taken as 1 if the image has none). oiiotool --ccmatrix is the transpose.
""",
)
