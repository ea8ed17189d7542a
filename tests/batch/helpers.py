"""Helpers for the batch CLI tests: folders and sequences of small real EXRs, JSON-lines parsing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.cli.conftest import hdr_rgba, read_exr, write_exr


def exr_folder(folder: Path, names: list[str], size: tuple[int, int] = (24, 32), *, half: bool = True) -> list[Path]:
    """Small RGBA + AOV EXRs, each with its own random HDR content."""
    folder.mkdir(parents=True, exist_ok=True)
    return [write_exr(folder / n, hdr_rgba(*size, seed=i), half=half) for i, n in enumerate(names)]


def records(stdout: str) -> list[dict]:
    """The --json records: one JSON object per line, nothing else on stdout."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def by_input(stdout: str) -> dict[str, dict]:
    return {Path(r["input"]).name: r for r in records(stdout)}


def rgba(path: Path) -> np.ndarray:
    _, planes = read_exr(path)
    return np.stack([planes[c].astype(np.float32) for c in "RGBA"], axis=-1)


def listing(folder: Path) -> list[str]:
    """Every file below `folder`, hidden ones included (a left-over temporary would show here)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
