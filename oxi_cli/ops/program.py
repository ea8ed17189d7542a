"""A chain of colour ops as one flat program (op codes + parameter and table buffers) every backend runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from oxi_cli.ops.base import ColorOp

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


def compile_program(ops: Sequence[ColorOp], has_alpha: bool) -> Program:
    """Encode consecutive colour ops so a backend applies all of them with one read and write per pixel."""
    rows, params, tables = [], [], []
    param_len = table_len = 0
    for op in ops:
        row = op.encode(has_alpha)
        size = 0 if row.table is None else int(row.table.shape[0])
        rows.append((row.code, param_len, table_len, size))
        params.extend(row.params)
        param_len += len(row.params)
        if row.table is not None:
            tables.append(row.table.reshape(-1))
            table_len += row.table.size
    return Program(
        ops=np.asarray(rows, dtype=np.int32).reshape(-1, 4),
        params=np.asarray(params or [0.0], dtype=np.float32),
        tables=np.concatenate(tables).astype(np.float32) if tables else np.zeros(1, np.float32),
        uses_alpha=has_alpha and any(op.touches_alpha() for op in ops),
    )
