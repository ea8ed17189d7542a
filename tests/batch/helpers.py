"""Helpers for the batch CLI tests: folders and sequences of small real EXRs, JSON-lines parsing."""

from __future__ import annotations

import json
import subprocess
import threading
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


def output_to_the_end(proc: subprocess.Popen, timeout: float = 120) -> tuple[str, str]:
    """(stdout, stderr) until the process ends. Unlike communicate(), stdout keeps what an earlier readline()
    had already buffered: communicate() reads the pipe's descriptor and skips it (a second record that arrived
    with the first was lost that way)."""
    text: dict[str, str] = {}

    def drain(name: str, stream) -> None:
        text[name] = stream.read()

    threads = [threading.Thread(target=drain, args=(name, stream), daemon=True)
               for name, stream in (("out", proc.stdout), ("err", proc.stderr))]
    for t in threads:
        t.start()
    proc.wait(timeout=timeout)
    for t in threads:
        t.join(timeout)
    return text.get("out", ""), text.get("err", "")
