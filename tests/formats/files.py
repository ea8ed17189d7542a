"""Writing small LUT / CDL files for tests, and checking that a parse error names the file and the line."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oxi_cli.errors import FormatError


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def rows_text(rows: np.ndarray, fmt: str = "%.9g") -> str:
    """Rows of numbers, one per line; 9 significant digits give back the exact float32 values."""
    return "".join(" ".join(fmt % v for v in row) + "\n" for row in np.asarray(rows))


def random_rows(n: int, cols: int = 3, seed: int = 0) -> np.ndarray:
    """float32 LUT outputs with values below 0 and above 1 (HDR), none exactly zero."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.5, 2.5, size=(n, cols)).astype(np.float32)


def expect_error(load: Callable[..., Any], path: Path, line: int | None, *needles: str) -> FormatError:
    """load(path) raises FormatError whose message starts with 'path:line:' and contains each needle."""
    with pytest.raises(FormatError) as info:
        load(path)
    err = info.value
    msg = str(err)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert msg.startswith(where), f"message should start with {where!r}: {msg!r}"
    assert err.path == str(path) and err.line == line
    assert "\n" not in msg, f"one line expected: {msg!r}"
    for needle in needles:
        assert re.search(needle, msg), f"{needle!r} not in {msg!r}"
    return err
