"""1D LUT per channel with linear interpolation over an input domain (as OCIO's Lut1D)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, finite_triple

MIN_SIZE, MAX_SIZE = 2, 1 << 20


@dataclass(frozen=True, eq=False)
class Lut1d(ColorOp):
    """table is (N, 3) float32; index = (x - min) / (max - min) * (N - 1), clamped; NaN takes the first entry."""

    table: np.ndarray
    domain_min: tuple[float, float, float] = (0.0, 0.0, 0.0)
    domain_max: tuple[float, float, float] = (1.0, 1.0, 1.0)
    name: ClassVar[str] = "lut1d"

    def __post_init__(self) -> None:
        table = np.asarray(self.table, dtype=np.float32)
        if table.ndim == 1:
            table = np.repeat(table[:, None], 3, axis=1)
        if table.ndim != 2 or table.shape[1] != 3:
            raise OpError(f"1D LUT table must be (N, 3), got shape {table.shape}")
        if not MIN_SIZE <= table.shape[0] <= MAX_SIZE:
            raise OpError(f"1D LUT size must be {MIN_SIZE}..{MAX_SIZE}, got {table.shape[0]}")
        if not np.isfinite(table).all():
            raise OpError("1D LUT contains NaN or Inf values")
        lo = finite_triple("1D LUT domain min", self.domain_min)
        hi = finite_triple("1D LUT domain max", self.domain_max)
        if any(h <= lo_ for lo_, h in zip(lo, hi, strict=True)):
            raise OpError(f"1D LUT domain max {hi} must exceed domain min {lo}")
        table = np.ascontiguousarray(table)
        table.setflags(write=False)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "domain_min", lo)
        object.__setattr__(self, "domain_max", hi)

    @property
    def size(self) -> int:
        return int(self.table.shape[0])
