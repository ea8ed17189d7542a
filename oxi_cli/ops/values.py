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
