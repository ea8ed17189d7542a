"""3D LUT with trilinear or tetrahedral interpolation over an input domain (as OCIO's Lut3D)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded, freeze_lut, lut_domain
from oxi_cli.ops.codes import LUT3D_TETRAHEDRAL, LUT3D_TRILINEAR

Interp = Literal["tetrahedral", "trilinear"]
MIN_SIZE, MAX_SIZE = 2, 256


@dataclass(frozen=True, eq=False)
class Lut3d(ColorOp):
    """table is (N, N, N, 3) float32 indexed [r, g, b]; inputs outside the domain clamp to its edge, NaN to min."""

    table: np.ndarray
    domain_min: tuple[float, float, float] = (0.0, 0.0, 0.0)
    domain_max: tuple[float, float, float] = (1.0, 1.0, 1.0)
    interp: Interp = "tetrahedral"
    name: ClassVar[str] = "lut3d"

    def __post_init__(self) -> None:
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
        rows = np.asarray(rows, dtype=np.float32)
        if rows.shape != (size**3, 3):
            raise OpError(f"3D LUT of size {size} needs {size**3} rows of 3 numbers, got {rows.shape[0]}")
        table = rows.reshape(size, size, size, 3).transpose(2, 1, 0, 3)
        return cls(table, **kwargs)  # type: ignore[arg-type]
