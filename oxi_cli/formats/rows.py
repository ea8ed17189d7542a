"""A LUT file's numeric rows: plain decimal bodies parsed with NumPy, the rest with Numba; errors name the line."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from oxi_cli.errors import FormatError
from oxi_cli.formats.text import INTEGER, NON_FINITE, NUMBER, fits_float32, iter_lines, quote

_POW10 = np.array([10.0**k for k in range(23)], dtype=np.float64)
# Digits beyond this mantissa are dropped (the value keeps ~17 significant digits, far past float32's 9).
_MANT_LIMIT = 10**17

# Byte classes, one table for both scanners so that they agree on what is whitespace.
_OTHER, _LETTER, _SPACE, _NEWLINE, _SIGN, _POINT, _DIGIT = range(7)
_CLASS = np.full(256, _OTHER, dtype=np.uint8)
_CLASS[np.r_[65:91, 97:123]] = _LETTER
_CLASS[[32, 9, 13, 11, 12]] = _SPACE
_CLASS[10] = _NEWLINE
_CLASS[[43, 45]] = _SIGN
_CLASS[46] = _POINT
_CLASS[48:58] = _DIGIT


# Compiled by _numba_scanner(), on first use.
def _scan_rows(buf, pos, ncols, out, int_only, skip_words, cube_from, cube, stop_when_full):
    """Parse rows of `ncols` numbers from buf[pos:] into out (flat, capacity rows * ncols).

    With cube > 0, rows from index `cube_from` on are a cube x cube x cube table in file order (red
    fastest) and are stored transposed, indexed [r, g, b]: this saves a separate transpose pass, which
    costs as much as the parse itself at 256^3.

    Returns (ok, rows, line, line_start, first_extra_line, last_row_line); lines count from 0 at `pos`.
    On a bad line ok is False and line / line_start locate it; Python then explains what is wrong.
    Rows past the capacity are counted, not stored, so the caller can say how many the file has;
    with stop_when_full, scanning ends at the first token past the capacity instead.
    """
    n = buf.shape[0]
    cap = out.shape[0] // ncols
    rows = 0
    col = 0
    line = 0
    line_start = pos
    extra_line = -1
    last_row_line = -1
    dst = 0
    cube2 = cube * cube
    i = pos
    while i < n:
        c = buf[i]
        if c == 10:
            if col != 0:
                if col != ncols:
                    return False, rows, line, line_start, extra_line, last_row_line
                rows += 1
                last_row_line = line
                col = 0
            line += 1
            i += 1
            line_start = i
            continue
        if _CLASS[c] == _SPACE:
            i += 1
            continue
        if c == 35 or (skip_words and col == 0 and _CLASS[c] == _LETTER):
            while i < n and buf[i] != 10:
                i += 1
            continue
        if col == ncols:
            return False, rows, line, line_start, extra_line, last_row_line
        if stop_when_full and rows == cap:
            return True, rows, line, line_start, extra_line, last_row_line
        # One number: [+-] digits [. digits] [e [+-] digits], same grammar as NUMBER.
        j = i
        neg = False
        if c == 43 or c == 45:
            neg = c == 45
            j += 1
        mant = 0
        exp_adj = 0
        ndig = 0
        frac = False
        has_exp = False
        while j < n and 48 <= buf[j] <= 57:
            if mant < _MANT_LIMIT:
                mant = mant * 10 + (buf[j] - 48)
            else:
                exp_adj += 1
            ndig += 1
            j += 1
        if j < n and buf[j] == 46:
            frac = True
            j += 1
            while j < n and 48 <= buf[j] <= 57:
                if mant < _MANT_LIMIT:
                    mant = mant * 10 + (buf[j] - 48)
                    exp_adj -= 1
                ndig += 1
                j += 1
        if ndig == 0:
            return False, rows, line, line_start, extra_line, last_row_line
        if j < n and (buf[j] == 101 or buf[j] == 69):
            has_exp = True
            j += 1
            eneg = False
            if j < n and (buf[j] == 43 or buf[j] == 45):
                eneg = buf[j] == 45
                j += 1
            edig = 0
            e = 0
            while j < n and 48 <= buf[j] <= 57:
                if e < 100000:
                    e = e * 10 + (buf[j] - 48)
                edig += 1
                j += 1
            if edig == 0:
                return False, rows, line, line_start, extra_line, last_row_line
            exp_adj += -e if eneg else e
        if j < n and not (_CLASS[buf[j]] == _SPACE or buf[j] == 10 or buf[j] == 35):
            return False, rows, line, line_start, extra_line, last_row_line
        if int_only and (frac or has_exp):
            return False, rows, line, line_start, extra_line, last_row_line
        v = np.float64(mant)
        if mant != 0:
            if 0 < exp_adj <= 22:
                v *= _POW10[exp_adj]
            elif exp_adj > 22:
                v *= 10.0**exp_adj
            elif -22 <= exp_adj < 0:
                v /= _POW10[-exp_adj]
            elif exp_adj < -22:
                v /= 10.0 ** (-exp_adj)
        if neg:
            v = -v
        f = np.float32(v)
        if not np.isfinite(f):
            return False, rows, line, line_start, extra_line, last_row_line
        if col == 0:
            dst = rows
            if cube > 0 and rows >= cube_from:
                k = rows - cube_from
                dst = cube_from + ((k % cube) * cube + (k // cube) % cube) * cube + k // cube2
        if rows < cap:
            out[dst * ncols + col] = f
        elif extra_line < 0:
            extra_line = line
        col += 1
        i = j
    if col != 0:
        if col != ncols:
            return False, rows, line, line_start, extra_line, last_row_line
        rows += 1
        last_row_line = line
    return True, rows, line, line_start, extra_line, last_row_line


@dataclass(frozen=True)
class Rows:
    """Result of scanning numeric rows: the stored rows and where things were in the file."""

    values: np.ndarray  # (min(count, capacity), ncols) float32
    count: int  # rows found in the file, stored or not
    first_extra_line: int | None  # line of the first row past the capacity
    last_row_line: int | None  # line of the last row


# A scan before its line numbers are made absolute: the stored rows, the count of rows, and the lines (from 0
# at `pos`, -1 for none) of the first row past the capacity and of the last row.
_Scan = tuple[np.ndarray, int, int, int]


def scan_rows(
    path: str | Path,
    data: bytes | np.ndarray,
    pos: int,
    first_line: int,
    ncols: int,
    capacity: int,
    what: str,
    *,
    end: int | None = None,
    integers: bool = False,
    skip_words: bool = False,
    cube: tuple[int, int] = (0, 0),
    stop_when_full: bool = False,
) -> Rows:
    """Parse the numeric body from byte `pos` (line `first_line`): rows of `ncols` numbers each.

    Blank lines and `#` comments are skipped; with `skip_words`, lines starting with a letter are too
    (.3dl keyword lines). Scanning stops at byte `end` (default: the end of the data). A malformed row
    raises FormatError naming its line and what was expected. `cube=(first, n)` stores rows from index
    `first` on, an n³ table in .cube order (red fastest), already transposed to [r, g, b] order.
    With `stop_when_full`, whatever follows the first `capacity` rows is not read at all.
    """
    buf = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else data
    if end is not None:
        buf = buf[:end]
    # A header's size is a claim: a row takes at least 2 * ncols bytes ("0 0 0\n"), so never allocate for
    # more rows than the bytes left can hold. The caller then finds too few rows and says so.
    room = max(0, (buf.shape[0] - pos + 1) // (2 * ncols))
    if room < capacity:
        capacity, cube = room, (0, 0)  # the table cannot be complete: no need to lay it out
    scan = (
        _numpy_scan(buf[pos:], ncols, capacity, integers, cube, stop_when_full)
        if _numpy_pays(buf.shape[0] - pos)
        else None
    )
    if scan is None:
        out = np.empty(capacity * ncols, dtype=np.float32)
        ok, rows, line, line_start, extra, last = _numba_scanner()(
            buf, pos, ncols, out, integers, skip_words, *cube, stop_when_full
        )
        if not ok:
            # Only the bad line is copied out (the buffer may hold hundreds of MB).
            text = buf[line_start : line_start + 4096].tobytes().split(b"\n", 1)[0]
            raise FormatError(path, first_line + line, explain_bad_row(text, ncols, what, integers))
        stored = min(rows, capacity)
        scan = out[: stored * ncols].reshape(stored, ncols), rows, extra, last
    values, count, extra, last = scan
    return Rows(
        values=values,
        count=count,
        first_extra_line=None if extra < 0 else first_line + extra,
        last_row_line=None if last < 0 else first_line + last,
    )


# Body sizes up to which NumPy is done sooner than Numba's scanner. NumPy takes 15-20 ns a byte, the scanner 2.5 but
# only once Numba is imported (0.19-0.26 s) and the scanner loaded from Numba's cache (0.06-0.075 s). Fresh processes on
# a 2-core x86-64 machine (AVX-512), best of 5: 81³ .cube (14 MB) 0.48 s with NumPy, 0.58 s with Numba; 97³ (25 MB)
# 0.65 s both. With Numba imported: 33³ 0.020 s vs 0.061 s, 65³ (7.4 MB) 0.118 s vs 0.078 s.
_NUMPY_MAX_BYTES = 16 << 20
_NUMPY_MAX_BYTES_NUMBA_IMPORTED = 4 << 20


def _numpy_pays(nbytes: int) -> bool:
    """Whether NumPy should try a body first: never once the scanner is loaded (17³: 1.0 ms vs NumPy's 2.1)."""
    if _numba_scanner.cache_info().currsize:
        return False
    # jit.py sets `kernel` once its Numba import is done (a job's warm-up thread may be in the middle of it).
    numba_ready = hasattr(sys.modules.get("oxi_cli.jit"), "kernel")
    return nbytes <= (_NUMPY_MAX_BYTES_NUMBA_IMPORTED if numba_ready else _NUMPY_MAX_BYTES)


@functools.cache
def _numba_scanner() -> Callable[..., tuple[bool, int, int, int, int, int]]:
    """The Numba scanner, built on first use, so that bodies NumPy parses never import Numba."""
    from oxi_cli.jit import kernel  # the project's Numba decorator: oxi's kernel cache, no fastmath

    return kernel(_scan_rows)


def compile_ahead() -> None:
    """Compile the scanner for every buffer it may read (a file's bytes, read-only, or an array): what
    `oxi probe --compile` runs, so that no LUT parse waits for Numba."""
    from numba import types

    from oxi_cli.jit import BOOL, F32, I64

    scanner = _numba_scanner()
    for readonly in (True, False):
        buf = types.Array(types.uint8, 1, "C", readonly=readonly)
        scanner.compile((buf, I64, I64, F32, BOOL, BOOL, I64, I64, BOOL))


# Mantissas of at most this many digits are taken whole by the scanner (it drops digits only once the mantissa
# passes 10**17) and fit an int64, so NumPy can repeat the scanner's float64 arithmetic bit for bit.
_NUMPY_DIGITS = 18


def _numpy_scan(
    body: np.ndarray, ncols: int, capacity: int, integers: bool, cube: tuple[int, int], stop_when_full: bool
) -> _Scan | None:
    """The Numba scanner's result for a body of plain decimal rows (`[+-] digits [. digits]`, a fixed count a
    line), with NumPy; None for anything else (comments, keywords, exponents, a malformed row...)."""
    cls = np.take(_CLASS, body)
    if body.size and cls.min() < _SPACE:
        return None
    edges = np.flatnonzero(np.diff(cls >= _SIGN, prepend=False, append=False))
    starts, ends = edges[::2], edges[1::2]
    lines = _row_lines(cls, starts, ncols)
    values = None if lines is None else _decimals(body, cls, starts, ends, integers)
    if lines is None or values is None:
        return None
    if stop_when_full:
        lines = lines[:capacity]
    stored = _stored(values.reshape(-1, ncols), capacity, cube)
    if stored is None:
        return None
    count = lines.size
    return stored, count, int(lines[capacity]) if count > capacity else -1, int(lines[-1]) if count else -1


def _row_lines(cls: np.ndarray, starts: np.ndarray, ncols: int) -> np.ndarray | None:
    """The line (from 0) of each row; None unless every line holds no token or exactly `ncols`."""
    # Searching the newlines among the tokens, not the other way round: a row has `ncols` tokens, one newline.
    per_line = np.diff(np.searchsorted(starts, np.flatnonzero(cls == _NEWLINE)), prepend=0, append=starts.size)
    if ((per_line != 0) & (per_line != ncols)).any():
        return None
    return np.flatnonzero(per_line)


def _decimals(
    body: np.ndarray, cls: np.ndarray, starts: np.ndarray, ends: np.ndarray, integers: bool
) -> np.ndarray | None:
    """The tokens' float32 values by the scanner's arithmetic: an integer mantissa over a power of ten, in
    float64, then rounded. None unless every token is `[+-] digits [. digits]` (no point when `integers`)."""
    signed = cls[starts] == _SIGN
    if np.count_nonzero(cls == _SIGN) != np.count_nonzero(signed):
        return None  # a sign inside a token
    points, owner = _points(cls, starts, ends)
    if owner is None or (integers and points.size):
        return None
    ndigits = ends - starts - signed
    ndigits[owner] -= 1
    if ndigits.size and not (ndigits.min() >= 1 and ndigits.max() <= _NUMPY_DIGITS):
        return None
    frac = np.zeros_like(ndigits)
    frac[owner] = ends[owner] - points - 1
    value = _mantissas(body[cls == _DIGIT], ndigits).astype(np.float64) / _POW10[frac]
    np.negative(value, out=value, where=body[starts] == ord("-"))
    return value.astype(np.float32)  # below 1e18: finite in float32, as the scanner demands


def _points(cls: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Where the decimal points are, and the token of each; None for the tokens when one has two points."""
    points = np.flatnonzero(cls == _POINT)
    if points.size == starts.size and ((starts <= points) & (points < ends)).all():
        return points, np.arange(points.size)  # one in every token, as "%.6f" writes: no need to search
    owner = np.searchsorted(starts, points, side="right") - 1
    return points, None if (owner[1:] == owner[:-1]).any() else owner


def _mantissas(digits: np.ndarray, ndigits: np.ndarray) -> np.ndarray:
    """Each token's digits as one integer; `digits` holds every token's digit characters, in order."""
    width = int(ndigits.max(initial=0))
    at = np.cumsum(ndigits) - 1  # each token's last digit, then the one before...
    mant = np.zeros(ndigits.size, dtype=np.int64)
    for k in range(width):
        d = np.take(digits, at, mode="clip")
        d[ndigits <= k] = ord("0")  # past a token's first digit: pad with zeros
        mant += d * np.int64(10**k)
        at -= 1
    # Character codes, not digit values, are gathered and summed (uint8 gathers: 52 -> 20 ms at 65³); each of
    # the `width` places so adds ord("0") times its power of ten, taken off here.
    return mant - ord("0") * ((10**width - 1) // 9)


def _stored(rows: np.ndarray, capacity: int, cube: tuple[int, int]) -> np.ndarray | None:
    """The rows the scanner stores: the first `capacity`, with a cube table transposed to [r, g, b] order.
    None for an incomplete cube, which the scanner leaves partly laid out (its caller reports the count)."""
    first, n = cube
    if n == 0:
        return rows[:capacity]
    if rows.shape[0] < capacity or capacity != first + n**3:
        return None
    out = np.empty_like(rows[:capacity])
    out[:first] = rows[:first]
    out[first:].reshape(n, n, n, -1)[...] = rows[first:capacity].reshape(n, n, n, -1).transpose(2, 1, 0, 3)
    return out


def explain_bad_row(text: bytes, ncols: int, what: str, integers: bool) -> str:
    """Say what is wrong with a row the scanner rejected (error path only, so plain Python is fine)."""
    hash_at = text.find(b"#")
    toks = (text if hash_at < 0 else text[:hash_at]).split()
    kind = "integer" if integers else "number"
    for tok in toks:
        shown = quote(tok.decode("utf-8", errors="replace"))
        if NON_FINITE.fullmatch(tok):
            return f"{what}: NaN/Inf value {shown} is not allowed; LUT values must be finite numbers"
        if not (INTEGER if integers else NUMBER).fullmatch(tok):
            return f"{what}: expected {ncols} {kind}s per row, found {shown}"
        if not fits_float32(float(tok)):
            return f"{what}: value {shown} is out of range for 32-bit floats"
    return f"{what}: expected {ncols} {kind}s per row, found {len(toks)}"


def row_line(data: bytes, pos: int, first_line: int, index: int) -> int:
    """Line number of the `index`-th (0-based) data row from byte `pos`; error path only."""
    for line in iter_lines(data, pos, first_line):
        if line.text:
            if index == 0:
                return line.number
            index -= 1
    return first_line
