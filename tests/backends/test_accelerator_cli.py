"""`oxi OP IN OUT --backend NAME` through the CLI gives the host's file, within half-float rounding, for each
accelerator (every registered backend but the host)."""

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
def test_cli_output_of_each_accelerator_matches_the_hosts(each_accelerator, cpu_backend, tmp_path, op):
    # The backends are opened here only to skip (a failure under OXI_REQUIRE_GPU=1) where one will not open; each
    # `oxi` process opens its own by name, on the device `--backend NAME` picks, as each_accelerator's.
    outs = {}
    for name in (cpu_backend.name, each_accelerator.name):
        outs[name] = tmp_path / f"{name}.exr"
        _run([OPS[op][0], str(PLATE), str(outs[name]), *OPS[op][1:], "--backend", name])
    host, accelerator = _channels(outs[cpu_backend.name]), _channels(outs[each_accelerator.name])
    assert host.keys() == accelerator.keys()
    for name in host:
        a, b = accelerator[name], host[name]
        assert a.shape == b.shape and (np.isnan(a) == np.isnan(b)).all(), name
        # Half outputs: float32 results 1e-6 apart may round to neighbouring halves (2^-11 relative).
        ok = np.isnan(b) | (np.abs(a - b) <= 2.0**-10 * np.abs(b) + 2.0**-24)
        assert ok.all(), f"{op} {name}: {int((~ok).sum())} values differ, worst {np.nanmax(np.abs(a - b)):.3g}"
