"""Shared text helpers for LUT and CDL files: lines with numbers, and number tokens with clear errors."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from oxi_cli.errors import FormatError

# The one number grammar every LUT format accepts (rows.py's Numba scanner implements the same one).
NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
INTEGER = re.compile(rb"[+-]?\d+")
NON_FINITE = re.compile(rb"[+-]?(?:nan|inf|infinity)(?:\(.*\))?", re.IGNORECASE)
BOM = b"\xef\xbb\xbf"
# Largest float32; decimal values just above it still round down to it, so compare with a small margin.
_F32_MAX = float(np.finfo(np.float32).max) * (1 + 2.0**-25)
# Errors quote a token from the user's file only when it is this short and printable: a file that is not a
# LUT at all (a password file, a key) must not have its content copied into a message or a log.
MAX_QUOTED = 40
KEYWORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Line:
    """One source line: 1-based number, byte span in the file, and its text without the comment."""

    number: int
    start: int
    end: int
    text: str

    @property
    def tokens(self) -> list[str]:
        return self.text.split()


def iter_lines(data: bytes, pos: int = 0, number: int = 1) -> Iterator[Line]:
    """Yield lines from byte offset `pos` (whose line number is `number`), `#` comments stripped."""
    if pos == 0 and data.startswith(BOM):
        pos = len(BOM)
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        end = n if nl < 0 else nl + 1
        raw = data[pos:end]
        hash_at = raw.find(b"#")
        if hash_at >= 0:
            raw = raw[:hash_at]
        yield Line(number, pos, end, raw.decode("utf-8", errors="replace").strip())
        pos = end
        number += 1


def quote(token: str) -> str:
    """A token from the user's file, as an error may show it: quoted when short and printable, else described."""
    if len(token) <= MAX_QUOTED and token.isprintable() and token.isascii():
        return repr(token)
    return f"a {len(token)}-character token" if token.isprintable() else "a token with non-printable characters"


def looks_like_keyword(word: str) -> bool:
    """True for a word that could be a misspelt keyword (quoted in errors); False for anything else."""
    return len(word) <= MAX_QUOTED and KEYWORD.fullmatch(word) is not None


def unknown_keyword(word: str, expected: str, format: str) -> str:
    """The error for a line that starts with an unknown word: a misspelt keyword is quoted, anything else is not."""
    if looks_like_keyword(word):
        return f"unknown keyword {word!r}; expected {expected}"
    return f"this line is neither a {format} keyword nor numbers; the file does not look like a {format} LUT"


def looks_numeric(token: str) -> bool:
    """True when a token is a number, NaN or Inf: i.e. it starts a data row rather than a keyword."""
    b = token.encode("ascii", errors="replace")
    return bool(NUMBER.fullmatch(b) or NON_FINITE.fullmatch(b))


def fits_float32(value: float) -> bool:
    """True when the value rounds to a finite float32 (LUT tables and ops are float32)."""
    return abs(value) <= _F32_MAX


def parse_number(path: str | Path, line: int, token: str, what: str, integer: bool = False) -> float:
    """Parse one finite number (or integer) token, or raise FormatError saying what was expected."""
    b = token.encode("ascii", errors="replace")
    if NON_FINITE.fullmatch(b):
        raise FormatError(path, line, f"{what}: NaN/Inf value {quote(token)} is not allowed; use finite numbers")
    pattern = INTEGER if integer else NUMBER
    kind = "an integer" if integer else "a number"
    if not pattern.fullmatch(b):
        raise FormatError(path, line, f"{what}: expected {kind}, found {quote(token)}")
    value = float(token)
    if not fits_float32(value):
        raise FormatError(path, line, f"{what}: value {quote(token)} is out of range for 32-bit floats")
    return value


def parse_numbers(
    path: str | Path, line: Line, count: int, what: str, first: int = 1, integer: bool = False
) -> list[float]:
    """Parse exactly `count` numbers from a line's tokens starting at index `first` (after the keyword)."""
    toks = line.tokens[first:]
    if len(toks) != count:
        noun = "integer" if integer else "number"
        raise FormatError(
            path, line.number, f"{what} needs {count} {noun}{'s' if count > 1 else ''}, found {len(toks)}"
        )
    return [parse_number(path, line.number, t, what, integer) for t in toks]
