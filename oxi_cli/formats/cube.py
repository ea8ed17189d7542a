""".cube LUTs (Iridas/Adobe and Resolve dialects) -> [Lut1d], [Lut3d] or [Lut1d shaper, Lut3d]."""

from __future__ import annotations

from pathlib import Path

from oxi_cli.errors import FormatError, OpError
from oxi_cli.formats.rows import scan_rows
from oxi_cli.formats.text import Line, iter_lines, looks_numeric, parse_numbers, unknown_keyword
from oxi_cli.ops import ColorOp, Lut1d, Lut3d
from oxi_cli.ops import lut1d as lut1d_mod
from oxi_cli.ops import lut3d as lut3d_mod

KEYWORDS = (
    "TITLE",
    "DOMAIN_MIN",
    "DOMAIN_MAX",
    "LUT_1D_SIZE",
    "LUT_3D_SIZE",
    "LUT_1D_INPUT_RANGE",
    "LUT_3D_INPUT_RANGE",
)
SIZE_LIMITS = {
    "LUT_1D_SIZE": (lut1d_mod.MIN_SIZE, lut1d_mod.MAX_SIZE),
    "LUT_3D_SIZE": (lut3d_mod.MIN_SIZE, lut3d_mod.MAX_SIZE),
}


def parse_cube(data: bytes, path: str | Path, interp: str = "tetrahedral") -> list[ColorOp]:
    """Parse a .cube file's bytes.

    As OpenColorIO reads them: DOMAIN_MIN/MAX (Iridas) or LUT_nD_INPUT_RANGE (Resolve) map the input
    range onto the table; with both LUT_1D_SIZE and LUT_3D_SIZE the 1D rows come first and act as a
    shaper whose output feeds the 3D table, each with its own input range. Red changes fastest.
    """
    header: dict[str, tuple[Line, list[float]]] = {}
    body: Line | None = None
    last_header_line = 1
    for line in iter_lines(data):
        if not line.text:
            continue
        last_header_line = line.number
        word = line.tokens[0]
        if looks_numeric(word):
            body = line
            break
        key = word.upper()
        if key not in KEYWORDS:
            expected = f"one of {', '.join(KEYWORDS)} or numbers"
            raise FormatError(path, line.number, unknown_keyword(word, expected, ".cube"))
        if key in header:
            raise FormatError(path, line.number, f"{key} given twice (first at line {header[key][0].number})")
        header[key] = (line, _keyword_values(path, line, key))

    size1 = _size(header, "LUT_1D_SIZE")
    size3 = _size(header, "LUT_3D_SIZE")
    if size1 is None and size3 is None:
        at = body.number if body else last_header_line
        raise FormatError(path, at, "missing LUT_3D_SIZE or LUT_1D_SIZE before the data rows")
    dom1, dom3 = _domains(path, header, size1, size3)

    n1 = size1 or 0
    n3 = size3**3 if size3 else 0
    expected = n1 + n3
    start = body.start if body else len(data)
    first_line = body.number if body else 1
    rows = scan_rows(path, data, start, first_line, 3, expected, "LUT data row", cube=(n1, size3 or 0))
    if rows.count != expected:
        at = rows.first_extra_line if rows.count > expected else rows.last_row_line or last_header_line
        raise FormatError(path, at, f"expected {_describe(size1, size3)}, found {rows.count}")

    ops: list[ColorOp] = []
    try:
        if size1:
            ops.append(Lut1d(rows.values[:n1], *dom1))
        if size3:
            # Rows arrive already in [r, g, b] order (scan_rows(cube=...)), as from_red_fastest would give.
            table = rows.values[n1:].reshape(size3, size3, size3, 3)
            ops.append(Lut3d(table, dom3[0], dom3[1], interp))  # type: ignore[arg-type]
    except OpError as exc:
        raise FormatError(path, None, str(exc)) from None
    return ops


def _keyword_values(path: str | Path, line: Line, key: str) -> list[float]:
    if key == "TITLE":
        return []
    if key in SIZE_LIMITS:
        (size,) = parse_numbers(path, line, 1, key, integer=True)
        lo, hi = SIZE_LIMITS[key]
        if not lo <= size <= hi:
            raise FormatError(path, line.number, f"{key} must be {lo}..{hi}, got {int(size)}")
        return [size]
    if key.startswith("DOMAIN"):
        return parse_numbers(path, line, 3, key)
    return parse_numbers(path, line, 2, key)  # LUT_nD_INPUT_RANGE min max


def _size(header: dict[str, tuple[Line, list[float]]], key: str) -> int | None:
    return int(header[key][1][0]) if key in header else None


Triple = tuple[float, float, float]


def _domains(
    path: str | Path, header: dict[str, tuple[Line, list[float]]], size1: int | None, size3: int | None
) -> tuple[tuple[Triple, Triple], tuple[Triple, Triple]]:
    """Input ranges of the 1D and 3D parts; each defaults to 0..1."""
    unit: tuple[Triple, Triple] = ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    ranges = {}
    for dim, size in (("1D", size1), ("3D", size3)):
        key = f"LUT_{dim}_INPUT_RANGE"
        if key in header:
            line, (lo, hi) = header[key]
            if size is None:
                raise FormatError(path, line.number, f"{key} given without LUT_{dim}_SIZE")
            ranges[dim] = _checked(path, line, key, (lo,) * 3, (hi,) * 3)
    if "DOMAIN_MIN" in header or "DOMAIN_MAX" in header:
        line = header.get("DOMAIN_MIN", header.get("DOMAIN_MAX"))[0]  # type: ignore[index]
        if size1 and size3:
            raise FormatError(
                path,
                line.number,
                "DOMAIN_MIN/MAX is ambiguous with both a 1D and a 3D table; "
                "use LUT_1D_INPUT_RANGE and LUT_3D_INPUT_RANGE",
            )
        dim = "1D" if size1 else "3D"
        lo = header["DOMAIN_MIN"][1] if "DOMAIN_MIN" in header else [0.0] * 3
        hi = header["DOMAIN_MAX"][1] if "DOMAIN_MAX" in header else [1.0] * 3
        domain = _checked(path, line, "DOMAIN_MIN/MAX", tuple(lo), tuple(hi))  # type: ignore[arg-type]
        # Some converters write both spellings; that is fine as long as they say the same thing.
        if ranges.setdefault(dim, domain) != domain:
            raise FormatError(
                path,
                line.number,
                f"DOMAIN_MIN/MAX {list(domain)} and LUT_{dim}_INPUT_RANGE {list(ranges[dim])} disagree",
            )
    return ranges.get("1D", unit), ranges.get("3D", unit)


def _checked(path: str | Path, line: Line, key: str, lo: Triple, hi: Triple) -> tuple[Triple, Triple]:
    if any(h <= l_ for l_, h in zip(lo, hi, strict=True)):
        raise FormatError(path, line.number, f"{key}: maximum {list(hi)} must exceed minimum {list(lo)}")
    return lo, hi


def _describe(size1: int | None, size3: int | None) -> str:
    if size1 and size3:
        return f"{size1} + {size3**3} = {size1 + size3**3} rows for LUT_1D_SIZE {size1} and LUT_3D_SIZE {size3}"
    if size3:
        return f"{size3**3} rows for LUT_3D_SIZE {size3}"
    return f"{size1} rows for LUT_1D_SIZE {size1}"
