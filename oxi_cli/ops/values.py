"""Op parameters as people type them ('1.1,1,0.9'): finite numbers within float32, one-line UsageErrors."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from oxi_cli.errors import UsageError
from oxi_cli.ops.base import FLOAT32_MAX


def parse_numbers(option: str, text: str, counts: tuple[int, ...]) -> list[float]:
    """Comma- or space-separated finite numbers, exactly one of `counts` of them."""
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise UsageError(f"{option} takes numbers separated by commas, got {text!r}") from None
    if len(values) not in counts:
        want = " or ".join(str(c) for c in counts)
        raise UsageError(f"{option} needs {want} comma-separated numbers, got {len(values)} ({text!r})")
    if not all(math.isfinite(v) for v in values):
        raise UsageError(f"{option} values must be finite, got {text!r}")
    check_float32(option, values, repr(text))
    return values


def check_float32(option: str, values: Sequence[float], shown: str) -> None:
    """Refuse numbers beyond float32's range (3.4e38): they would compute as Inf."""
    if any(abs(v) > FLOAT32_MAX for v in values):
        raise UsageError(f"{option} values must lie within ±3.4e38 (float32), got {shown}")


def shown(value: object) -> str:
    """A short repr for messages: a recipe value may be a huge or deeply nested TOML array."""
    import reprlib

    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxstring, r.maxother = 2, 6, 60, 60
    return r.repr(value)


def did_you_mean(word: object, known: Sequence[str]) -> str:
    """'; did you mean X?' naming the known name closest to a mistyped one (difflib's ratio 0.6 or more), else ''."""
    import difflib

    close = difflib.get_close_matches(str(word), list(known), n=1)
    return f"; did you mean {close[0]}?" if close else ""


def numbers(label: str, value: object, counts: tuple[int, ...]) -> list[float]:
    """Numbers from a string ('1,2,3'), one number, or a list (TOML)."""
    if isinstance(value, str):
        return parse_numbers(label, value, counts)
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise UsageError(f"{label} takes numbers, got {shown(value)}")
    if len(values) not in counts:
        raise UsageError(f"{label} needs {' or '.join(map(str, counts))} numbers, got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise UsageError(f"{label} values must be finite, got {shown(value)}")
    check_float32(label, values, shown(value))
    return [float(v) for v in values]


def switch(label: str, value: object) -> bool:
    """true/false as a flag, a TOML boolean or a `:key=1` modifier writes it."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise UsageError(f"{label} takes true or false, got {shown(value)}")


def pairs(text: str, separators: str) -> dict[str, str]:
    """'slope=1.1,1,0.9 sat=0.9' -> {'slope': '1.1,1,0.9', 'sat': '0.9'}."""
    out: dict[str, str] = {}
    for part in (p for p in re.split(separators, text.strip()) if p):
        key, eq, val = part.partition("=")
        if not eq or not key:
            raise UsageError(f"expected key=value, got {shown(part)} in {shown(text)}")
        out[key.strip().replace("-", "_")] = val.strip()
    return out
