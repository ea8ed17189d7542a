"""`oxi OP IN OUT --backend gpu` through the CLI gives the CPU backend's file, within half-float rounding."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

ROOT = Path(__file__).resolve().parents[2]
PLATE = ROOT / "examples" / "plate.exr"
OPS = {
    "cdl": ["cdl", "--slope", "1.1,0.95,0.9", "--offset", "0.01", "--power", "1.2", "--sat", "0.8"],
    "lut3d": ["lut3d", "--lut", str(ROOT / "examples" / "look.cube")],
    "resize": ["resize", "--scale", "0.37", "--filter", "lanczos3"],
    "blur": ["blur", "--sigma", "1.5"],
}


def _run(args: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    res = subprocess.run([sys.executable, "-m", "oxi_cli", *args], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr


def _channels(path: Path) -> dict[str, np.ndarray]:
    with OpenEXR.File(str(path), separate_channels=True) as f:
        return {name: c.pixels.astype(np.float32) for name, c in f.channels().items()}


@pytest.mark.parametrize("op", OPS)
def test_cli_gpu_output_matches_cpu_output(gpu_backend, tmp_path, op):
    outs = {}
    for backend in ("cpu", "gpu"):
        outs[backend] = tmp_path / f"{backend}.exr"
        device = ["--device", str(gpu_backend.adapter.index)] if backend == "gpu" else []
        _run([OPS[op][0], str(PLATE), str(outs[backend]), *OPS[op][1:], "--backend", backend, *device])
    cpu, gpu = _channels(outs["cpu"]), _channels(outs["gpu"])
    assert cpu.keys() == gpu.keys()
    for name in cpu:
        a, b = gpu[name], cpu[name]
        assert a.shape == b.shape and (np.isnan(a) == np.isnan(b)).all(), name
        # Half outputs: float32 results 1e-6 apart may round to neighbouring halves (2^-11 relative).
        ok = np.isnan(b) | (np.abs(a - b) <= 2.0**-10 * np.abs(b) + 2.0**-24)
        assert ok.all(), f"{op} {name}: {int((~ok).sum())} values differ, worst {np.nanmax(np.abs(a - b)):.3g}"
