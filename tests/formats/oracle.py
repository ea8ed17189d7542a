"""What OpenColorIO makes of a LUT or CDL file: its ops' tables and domains, and its output at grid points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import PyOpenColorIO as OCIO

from oxi_cli.ops import Lut1d, Lut3d
from tests.ops.harness import ocio_cpu

UNIT = ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))


def file_transform(path: Path, interp: Any = OCIO.INTERP_BEST, cccid: str = "") -> Any:
    return OCIO.FileTransform(src=str(path), cccId=cccid, interpolation=interp)


def ocio_ops(path: Path) -> list[tuple[str, np.ndarray, tuple, tuple]]:
    """OCIO's unoptimised op list for a LUT file as (kind, table, domain_min, domain_max).

    OCIO maps an input range with a MatrixTransform x*s + o placed before the LUT it belongs to;
    domain = [-o/s, (1-o)/s]. A LUT with no matrix before it has the unit domain.
    """
    proc = OCIO.Config.CreateRaw().getProcessor(file_transform(path))
    group = proc.getOptimizedProcessor(OCIO.OPTIMIZATION_NONE).createGroupTransform()
    out: list[tuple[str, np.ndarray, tuple, tuple]] = []
    domain = UNIT
    for t in group:
        if isinstance(t, OCIO.MatrixTransform):
            m = np.asarray(t.getMatrix()).reshape(4, 4)
            s, o = np.diag(m)[:3], np.asarray(t.getOffset())[:3]
            domain = (tuple(-o / s), tuple((1 - o) / s))
        elif isinstance(t, OCIO.Lut1DTransform):
            table = np.array([t.getValue(i) for i in range(t.getLength())], dtype=np.float32)
            out.append(("lut1d", table, *domain))
            domain = UNIT
        elif isinstance(t, OCIO.Lut3DTransform):
            n = t.getGridSize()
            table = np.array(
                [[[t.getValue(r, g, b) for b in range(n)] for g in range(n)] for r in range(n)], dtype=np.float32
            )
            out.append(("lut3d", table, *domain))
            domain = UNIT
        else:
            raise AssertionError(f"unexpected OCIO transform {t}")
    return out


def assert_ops_match_ocio(ops: list, path: Path, domain_atol: float = 1e-6) -> None:
    """Our parsed ops have OCIO's kinds, tables (bit-exact) and domains, in OCIO's order."""
    theirs = ocio_ops(path)
    assert [op.name for op in ops] == [kind for kind, *_ in theirs], f"ops {ops} vs OCIO {theirs}"
    for op, (_, table, lo, hi) in zip(ops, theirs, strict=True):
        np.testing.assert_array_equal(op.table, table, err_msg=f"{op.name} table differs from OCIO's")
        np.testing.assert_allclose(op.domain_min, lo, atol=domain_atol, err_msg="domain min")
        np.testing.assert_allclose(op.domain_max, hi, atol=domain_atol, err_msg="domain max")


def grid_inputs_3d(op: Lut3d) -> np.ndarray:
    """(N, N, N, 3) inputs that land exactly on the grid points table[r, g, b] of a 3D LUT."""
    n = op.size
    lo, hi = np.asarray(op.domain_min), np.asarray(op.domain_max)
    axis = np.arange(n) / (n - 1)
    r, g, b = np.meshgrid(axis, axis, axis, indexing="ij")
    return (lo + np.stack([r, g, b], axis=-1) * (hi - lo)).astype(np.float32)


def grid_inputs_1d(op: Lut1d) -> np.ndarray:
    """(N, 3) inputs that land on the entries table[i, c] of a 1D LUT."""
    lo, hi = np.asarray(op.domain_min), np.asarray(op.domain_max)
    axis = np.arange(op.size)[:, None] / (op.size - 1)
    return (lo + axis * (hi - lo)).astype(np.float32)


def ocio_apply_file(path: Path, rgb: np.ndarray, interp: Any = OCIO.INTERP_BEST) -> np.ndarray:
    """OCIO's FileTransform (LOSSLESS CPU processor) on float32 RGB values of any leading shape."""
    px = np.ascontiguousarray(rgb, dtype=np.float32).reshape(-1, 3).copy()
    ocio_cpu(file_transform(path, interp)).applyRGB(px)
    return px.reshape(rgb.shape)
