"""Sony Imageworks LUTs: .spi1d -> [Lut1d] and .spi3d -> [Lut3d], as OpenColorIO reads them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from oxi_cli.errors import FormatError, OpError
from oxi_cli.formats.rows import row_line, scan_rows
from oxi_cli.formats.text import Line, iter_lines, parse_numbers, unknown_keyword
from oxi_cli.ops import ColorOp, Lut1d, Lut3d
from oxi_cli.ops import lut1d as lut1d_mod
from oxi_cli.ops import lut3d as lut3d_mod

SPI1D_KEYWORDS = ("Version", "From", "Length", "Components")


def parse_spi1d(data: bytes, path: str | Path, interp: str = "tetrahedral") -> list[ColorOp]:
    """Parse a .spi1d file's bytes.

    Header `Version 1`, `Length N`, `Components 1|2|3`, optional `From min max` (the input domain,
    default 0 1), then N rows between `{` and `}`. One component feeds R, G and B; two leave B at 0.
    `interp` is accepted for a uniform signature: 1D tables always interpolate linearly.
    """
    header: dict[str, tuple[Line, list[float]]] = {}
    brace: Line | None = None
    for line in iter_lines(data):
        if not line.text:
            continue
        if line.text.startswith("{"):
            brace = line
            break
        word = line.tokens[0]
        key = next((k for k in SPI1D_KEYWORDS if k.lower() == word.lower()), None)
        if key is None:
            expected = f"{', '.join(SPI1D_KEYWORDS)} or '{{'"
            raise FormatError(path, line.number, unknown_keyword(word, expected, ".spi1d"))
        count = 2 if key == "From" else 1
        header[key] = (line, parse_numbers(path, line, count, key, integer=key != "From"))
    if brace is None:
        raise FormatError(path, None, "no '{' opening the table; expected Version, Length, Components, then {")
    for key in ("Version", "Length", "Components"):
        if key not in header:
            raise FormatError(path, brace.number, f"missing the {key} line before '{{'")
    version_line, (version,) = header["Version"]
    if version != 1:
        raise FormatError(path, version_line.number, f"only Version 1 exists, got {int(version)}")
    length_line, (length_f,) = header["Length"]
    length = int(length_f)
    lo, hi = lut1d_mod.MIN_SIZE, lut1d_mod.MAX_SIZE
    if not lo <= length <= hi:
        raise FormatError(path, length_line.number, f"Length must be {lo}..{hi}, got {length}")
    comp_line, (comp_f,) = header["Components"]
    comps = int(comp_f)
    if comps not in (1, 2, 3):
        raise FormatError(path, comp_line.number, f"Components must be 1, 2 or 3, got {comps}")
    dom_lo, dom_hi = header["From"][1] if "From" in header else (0.0, 1.0)
    if dom_hi <= dom_lo:
        raise FormatError(path, header["From"][0].number, f"From: maximum {dom_hi} must exceed minimum {dom_lo}")

    start = data.index(b"{", brace.start, brace.end) + 1
    close = data.find(b"}", start)
    if close < 0:
        raise FormatError(path, brace.number, "no '}' closing the table")
    rows = scan_rows(path, data, start, brace.number, comps, length, "1D LUT row", end=close)
    if rows.count != length:
        at = rows.first_extra_line if rows.count > length else rows.last_row_line or brace.number
        raise FormatError(path, at, f"expected {length} rows for Length {length}, found {rows.count}")
    table = np.zeros((length, 3), dtype=np.float32)
    table[:, :comps] = rows.values
    if comps == 1:
        table[:, 1] = table[:, 2] = table[:, 0]
    try:
        return [Lut1d(table, (dom_lo,) * 3, (dom_hi,) * 3)]
    except OpError as exc:
        raise FormatError(path, None, str(exc)) from None


def parse_spi3d(data: bytes, path: str | Path, interp: str = "tetrahedral") -> list[ColorOp]:
    """Parse a .spi3d file's bytes.

    Line 1 starts with SPILUT, line 2 is `3 3`, line 3 the size `N N N`; then rows `r g b R G B`
    giving the output at integer grid index (r, g, b), in any order. Every grid point must be given
    exactly once, and reading stops after N³ rows, as in OCIO. The domain is 0..1.
    """
    lines = iter_lines(data)
    head: list[Line] = []
    for line in lines:
        if line.text:
            head.append(line)
            if len(head) == 3:
                break
    if not head or not head[0].text.upper().startswith("SPILUT"):
        at = head[0].number if head else 1
        raise FormatError(path, at, "expected 'SPILUT 1.0' on the first line of a .spi3d file")
    if len(head) < 3:
        raise FormatError(path, head[-1].number, "expected a '3 3' line and then the size 'N N N'")
    size_line = head[2]
    sizes = [int(v) for v in parse_numbers(path, size_line, 3, "LUT size", first=0, integer=True)]
    lo, hi = lut3d_mod.MIN_SIZE, lut3d_mod.MAX_SIZE
    if len(set(sizes)) != 1 or not lo <= sizes[0] <= hi:
        raise FormatError(path, size_line.number, f"LUT size must be 'N N N' with N in {lo}..{hi}, got {sizes}")
    n = sizes[0]

    start, first_line = size_line.end, size_line.number + 1
    # As OCIO: reading stops once all n³ rows are in; whatever follows is not part of the LUT.
    rows = scan_rows(path, data, start, first_line, 6, n**3, "3D LUT row", stop_when_full=True)
    vals = rows.values
    idx = vals[:, :3]
    bad = np.flatnonzero(((idx != np.round(idx)) | (idx < 0) | (idx > n - 1)).any(axis=1))
    if bad.size:
        k = int(bad[0])
        raise FormatError(
            path,
            row_line(data, start, first_line, k),
            f"index ({', '.join(f'{v:g}' for v in idx[k])}) is not an integer grid point in 0..{n - 1}",
        )
    flat = (idx[:, 0].astype(np.intp) * n + idx[:, 1].astype(np.intp)) * n + idx[:, 2].astype(np.intp)
    order = np.argsort(flat, kind="stable")
    repeats = np.flatnonzero(flat[order][1:] == flat[order][:-1])
    if repeats.size:
        first, again = order[repeats[0]], order[repeats[0] + 1]
        r, g, b = np.unravel_index(flat[again], (n, n, n))
        raise FormatError(
            path,
            row_line(data, start, first_line, int(again)),
            f"grid point ({r}, {g}, {b}) given twice (first at line {row_line(data, start, first_line, int(first))})",
        )
    if flat.size < n**3:
        # The first index the sorted (and repeat-free) rows skip; memory in rows, never in the claimed n³.
        given = flat[order]
        gaps = np.flatnonzero(given != np.arange(given.size))
        r, g, b = np.unravel_index(int(gaps[0]) if gaps.size else given.size, (n, n, n))
        raise FormatError(
            path,
            rows.last_row_line or size_line.number,
            f"{n**3 - flat.size} of {n**3} grid points have no row, e.g. index ({r}, {g}, {b})",
        )
    table = np.empty((n**3, 3), dtype=np.float32)
    table[flat] = vals[:, 3:]
    table = table.reshape(n, n, n, 3)
    try:
        return [Lut3d(table, interp=interp)]  # type: ignore[arg-type]
    except OpError as exc:
        raise FormatError(path, None, str(exc)) from None
