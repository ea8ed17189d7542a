"""A chain of colour ops as one flat program (op codes + parameter and table buffers) every backend runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from oxi_cli.ops.base import ColorOp
from oxi_cli.ops.cdl import Cdl
from oxi_cli.ops.lut1d import Lut1d
from oxi_cli.ops.lut3d import Lut3d
from oxi_cli.ops.matrix import Matrix

# Op codes; the CPU interpreter and wgsl/color.wgsl use the same numbers.
CDL_NOCLAMP, CDL_ASC, MATRIX_RGB, MATRIX_RGBA, LUT1D, LUT3D_TETRAHEDRAL, LUT3D_TRILINEAR = range(7)
# Columns of Program.ops.
CODE, PARAM_OFFSET, TABLE_OFFSET, TABLE_SIZE = range(4)


@dataclass(frozen=True)
class Program:
    """ops: (n, 4) int32 rows of (code, param offset, table offset, table size N); params, tables: float32."""

    ops: np.ndarray
    params: np.ndarray
    tables: np.ndarray
    uses_alpha: bool

    @property
    def key(self) -> tuple[int, ...]:
        """What a compiled kernel can depend on: the sequence of op codes."""
        return tuple(int(c) for c in self.ops[:, CODE])


def _domain(op: Lut1d | Lut3d) -> list[float]:
    lo = np.asarray(op.domain_min, dtype=np.float64)
    scale = (op.size - 1) / (np.asarray(op.domain_max, np.float64) - lo)
    return [*lo.tolist(), *scale.tolist()]


def _encode(op: ColorOp, has_alpha: bool) -> tuple[int, list[float], np.ndarray | None]:
    if isinstance(op, Cdl):
        code = CDL_ASC if op.style == "asc" else CDL_NOCLAMP
        return code, [*op.slope, *op.offset, *op.power, op.sat], None
    if isinstance(op, Matrix):
        # A matrix that leaves alpha alone must not route it through zero coefficients (0 * Inf = NaN).
        code = MATRIX_RGBA if has_alpha and op.touches_alpha() else MATRIX_RGB
        return code, [*op.m, *op.offset], None
    if isinstance(op, Lut1d):
        return LUT1D, _domain(op), op.table
    if isinstance(op, Lut3d):
        code = LUT3D_TETRAHEDRAL if op.interp == "tetrahedral" else LUT3D_TRILINEAR
        return code, _domain(op), op.table
    raise TypeError(f"{type(op).__name__} is not a colour op")


def compile_program(ops: Sequence[ColorOp], has_alpha: bool) -> Program:
    """Encode consecutive colour ops so a backend applies all of them with one read and write per pixel."""
    rows, params, tables = [], [], []
    param_len = table_len = 0
    for op in ops:
        code, values, table = _encode(op, has_alpha)
        size = 0 if table is None else int(table.shape[0])
        rows.append((code, param_len, table_len, size))
        params.extend(values)
        param_len += len(values)
        if table is not None:
            tables.append(table.reshape(-1))
            table_len += table.size
    return Program(
        ops=np.asarray(rows, dtype=np.int32).reshape(-1, 4),
        params=np.asarray(params or [0.0], dtype=np.float32),
        tables=np.concatenate(tables).astype(np.float32) if tables else np.zeros(1, np.float32),
        uses_alpha=any(r[0] == MATRIX_RGBA for r in rows),
    )
