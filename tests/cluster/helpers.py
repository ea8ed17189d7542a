"""Helpers for the cluster tests: running the oxi command, frame sequences, comparing output folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.batch.helpers import exr_folder, listing
from tests.cli.conftest import OXI

SIZE = (48, 64)  # height, width: small, so the tests time Dask and oxi's plumbing, not pixels


def oxi_cmd(*args: str) -> list[str]:
    return [*([OXI] if OXI else [sys.executable, "-m", "oxi_cli"]), *args]


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "OXI_BACKEND": "cpu", "COLUMNS": "200", **(env or {})}
    return subprocess.run(oxi_cmd(*args), capture_output=True, text=True, env=full_env, timeout=timeout)


def sequence(folder: Path, frames: list[int], size: tuple[int, int] = SIZE) -> str:
    """plate.NNNN.exr for `frames` (gaps where a frame is left out); returns the pattern."""
    exr_folder(folder, [f"plate.{f:04d}.exr" for f in frames], size=size)
    return str(folder / "plate.####.exr")


def same_files(a: Path, b: Path) -> None:
    """Both folders hold the same files, byte for byte (no temporaries either)."""
    assert listing(a) == listing(b)
    for name in listing(a):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
