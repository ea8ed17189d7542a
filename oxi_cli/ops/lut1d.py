"""1D LUT per channel with linear interpolation over an input domain (as OCIO's Lut1D)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded, freeze_lut, lut_domain
from oxi_cli.ops.codes import LUT1D, LUT1D_HALF

MIN_SIZE, MAX_SIZE = 2, 1 << 20
HALF_CODES = 1 << 16


@dataclass(frozen=True, eq=False)
class Lut1d(ColorOp):
    """table is (N, 3) float32; index = (x - min) / (max - min) * (N - 1), clamped; NaN takes the first entry.

    `half_domain` (OCIO's inputHalfDomain): 65536 rows, one per half-float bit pattern; an input is
    interpolated between the two half values around it, as OCIO's renderer does (entries may be Inf there,
    as OCIO's own tables for log curves are).
    """

    table: np.ndarray
    domain_min: tuple[float, float, float] = (0.0, 0.0, 0.0)
    domain_max: tuple[float, float, float] = (1.0, 1.0, 1.0)
    half_domain: bool = False
    name: ClassVar[str] = "lut1d"
    flops_per_pixel: ClassVar[int] = 24

    def __post_init__(self) -> None:
        table = np.asarray(self.table, dtype=np.float32)
        if table.ndim == 1:
            table = np.repeat(table[:, None], 3, axis=1)
        if table.ndim != 2 or table.shape[1] != 3:
            raise OpError(f"1D LUT table must be (N, 3), got shape {table.shape}")
        if not self.half_domain:
            freeze_lut(self, "1D LUT", table, table.shape[0], MIN_SIZE, MAX_SIZE)
            return
        if table.shape[0] != HALF_CODES:
            raise OpError(f"a half-domain 1D LUT has {HALF_CODES} rows, got {table.shape[0]}")
        table = np.ascontiguousarray(table)
        table.setflags(write=False)
        object.__setattr__(self, "table", table)

    @property
    def size(self) -> int:
        return int(self.table.shape[0])

    def encode(self, has_alpha: bool) -> Encoded:
        if self.half_domain:
            return Encoded(LUT1D_HALF, [0.0], self.table)
        return Encoded(LUT1D, lut_domain(self), self.table)

    def table_bytes(self) -> int:
        return self.size * 16
