"""Parsers for option values (number lists, sizes) that raise one-line UsageErrors."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from oxi_cli.errors import UsageError

# Parameters reach the kernels as float32: a larger magnitude would silently become Inf (and NaN pixels).
FLOAT32_MAX = 3.4028234663852886e38


def numbers(option: str, text: str, counts: tuple[int, ...]) -> list[float]:
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


def triple(option: str, text: str) -> tuple[float, float, float]:
    """R,G,B or one number for all three."""
    values = numbers(option, text, (1, 3))
    return (values[0],) * 3 if len(values) == 1 else tuple(values)  # type: ignore[return-value]


def size(text: str) -> tuple[int, int]:
    """'1920x1080' -> (1920, 1080); both sides must be positive integers."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not m:
        raise UsageError(f"--size takes WIDTHxHEIGHT, e.g. 1920x1080, got {text!r}")
    w, h = int(m.group(1)), int(m.group(2))
    if w < 1 or h < 1:
        raise UsageError(f"--size needs a width and height of at least 1, got {text!r}")
    return w, h
