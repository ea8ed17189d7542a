""".3dl LUTs (Flame / Lustre integer code values) -> [Lut3d] or [Lut1d shaper, Lut3d], as OpenColorIO reads them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from oxi_cli.errors import FormatError, OpError
from oxi_cli.formats.rows import scan_rows
from oxi_cli.formats.text import Line, iter_lines, looks_numeric, parse_number
from oxi_cli.ops import ColorOp, Lut1d, Lut3d
from oxi_cli.ops import lut3d as lut3d_mod

# A maximum code value below this means floats, i.e. some other format that merely looks like .3dl.
LOWEST_PLAUSIBLE_MAX = 128


def parse_3dl(data: bytes, path: str | Path, interp: str = "tetrahedral") -> list[ColorOp]:
    """Parse a .3dl file's bytes.

    Lines that start with a letter (3DMESH, Mesh, LUT8, gamma...) are keywords and skipped. The first
    numeric line with more than 3 integers is the input mesh; the rows of 3 integers that follow are the
    3D table with blue changing fastest, its size the cube root of the row count. Output code values
    are scaled by the bit depth inferred from the largest value (8, 10, 12 or 16 bits), and a mesh that
    is not an even ramp becomes a 1D shaper before the table (both exactly as OCIO's FileFormat3DL).
    """
    mesh: list[float] | None = None
    mesh_line: Line | None = None
    body: Line | None = None
    for line in iter_lines(data):
        if not line.text:
            continue
        if line.text.startswith("<"):
            raise FormatError(path, line.number, "line starts with '<': this looks like XML, not a .3dl LUT")
        toks = line.tokens
        if not looks_numeric(toks[0]):
            continue
        if len(toks) > 3:
            if mesh_line is not None:
                raise FormatError(path, line.number, f"a second input mesh line (the first is line {mesh_line.number})")
            mesh_line = line
            mesh = [parse_number(path, line.number, t, "input mesh", integer=True) for t in toks]
            continue
        body = line
        break

    start = body.start if body else len(data)
    first_line = body.number if body else 1
    capacity = data.count(b"\n", start) + 1
    rows = scan_rows(path, data, start, first_line, 3, capacity, "3D LUT row", integers=True, skip_words=True)
    count = rows.count
    at = rows.last_row_line or (mesh_line.number if mesh_line else None)
    size = round(count ** (1.0 / 3.0)) if count else 0
    lo, hi = lut3d_mod.MIN_SIZE, lut3d_mod.MAX_SIZE
    if size**3 != count or not lo <= size <= hi:
        raise FormatError(path, at, f"found {count} rows of 3 integers; a 3D LUT needs N*N*N rows with N in {lo}..{hi}")

    table = rows.values
    scale3 = _scale(path, at, float(table.max()), "3D LUT")
    ops: list[ColorOp] = []
    try:
        if mesh is not None and mesh_line is not None:
            raw = np.asarray(mesh, dtype=np.float32)
            scale1 = _scale(path, mesh_line.number, float(raw.max()), "input mesh")
            if not _is_ramp(raw, scale1):
                ops.append(Lut1d(raw / np.float32(scale1)))
        ops.append(Lut3d((table / np.float32(scale3)).reshape(size, size, size, 3), interp=interp))
    except OpError as exc:
        raise FormatError(path, None, str(exc)) from None
    return ops


def likely_bit_depth(max_value: float) -> int:
    """OCIO's guess: the even bit depth whose code range, with 2x overshoot allowed, holds the maximum."""
    for bits in range(8, 17, 2):
        if max_value <= 2 * 2**bits - 1:
            # 14-bit scaling is not used in practice: above 8191 the values are taken as 16-bit.
            return 16 if bits == 14 else bits
    return 16


def _scale(path: str | Path, line: int | None, max_value: float, what: str) -> int:
    if max_value < LOWEST_PLAUSIBLE_MAX:
        raise FormatError(
            path,
            line,
            f"{what}: largest value is {max_value:g}; .3dl values are integer codes (8 to 16 bits), "
            "so this is probably another format",
        )
    return 2 ** likely_bit_depth(max_value) - 1


def _is_ramp(mesh: np.ndarray, scale: int) -> bool:
    """OCIO's loose identity test for the mesh: every entry within 2 codes of an even ramp to `scale`."""
    step = np.float32(scale) / (np.float32(mesh.size) - np.float32(1))
    ramp = np.arange(mesh.size, dtype=np.float32) * step
    return bool((np.abs(ramp - mesh) < 2).all())
