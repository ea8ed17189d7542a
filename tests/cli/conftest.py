"""Fixtures for CLI tests: real EXR files on disk and a runner for the installed `oxi` command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

OXI = shutil.which("oxi")


def run_oxi(*args: str, module: bool = False, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the installed console script (or `python -m oxi_cli`) in a subprocess, capturing output; `env` adds
    to the environment (a user's OXI_OVERWRITE is left out: tests say whether outputs may be replaced)."""
    cmd = [sys.executable, "-m", "oxi_cli", *args] if module or OXI is None else [OXI, *args]
    base = {k: v for k, v in os.environ.items() if k != "OXI_OVERWRITE"}
    full = {**base, "OXI_BACKEND": "cpu", "COLUMNS": "200", **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=300)


def hdr_rgba(height: int, width: int, seed: int = 0) -> np.ndarray:
    """Finite HDR-ish RGBA: values from -0.5 to ~40, never all zero."""
    rng = np.random.default_rng(seed)
    rgb = rng.lognormal(mean=-1.0, sigma=1.5, size=(height, width, 3)).astype(np.float32)
    rgb[rng.random((height, width, 3)) < 0.1] *= -0.2
    alpha = rng.uniform(0.1, 1.0, size=(height, width, 1)).astype(np.float32)
    return np.concatenate([rgb, alpha], axis=2)


def write_exr(path: Path, rgba: np.ndarray, *, half: bool = True, aovs: bool = True, **attrs: object) -> Path:
    dtype = np.float16 if half else np.float32
    channels = {"RGBA": rgba.astype(dtype)}
    if aovs:
        for i, c in enumerate("RGB"):
            channels[f"diffuse.{c}"] = np.ascontiguousarray(rgba[..., i] * 0.5).astype(dtype)
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage, **attrs}
    OpenEXR.File(header, channels).write(str(path))
    return path


def read_exr(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    with OpenEXR.File(str(path), separate_channels=True) as f:
        header = dict(f.header())
        planes = {name: ch.pixels.copy() for name, ch in f.channels().items()}
    return header, planes


@pytest.fixture
def plate(tmp_path: Path) -> Path:
    return write_exr(tmp_path / "plate.exr", hdr_rgba(37, 53), shot="sh010", exposure=1.5)
