"""Help and usage load none of the heavy libraries the jobs need (issue 9: `oxi --help` start-up)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from oxi_cli.ops.base import FLOAT32_MAX

# What real work imports and help must not: numpy alone was ~0.2 s of a 0.4 s `oxi --help` on the GPU host.
HEAVY = {"numpy", "numba", "wgpu", "OpenEXR", "PyOpenColorIO", "imageio", "tifffile", "imagecodecs", "llvmlite", "av",
         "PIL"}


def imported(*args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run `python -X importtime -m oxi_cli ARGS`; the top-level packages it imported (importtime logs each
    module once, on stderr, as `import time: self | cumulative | name`)."""
    cmd = [sys.executable, "-X", "importtime", "-m", "oxi_cli", *args]
    # What a process of its own imports (through the service the command itself imports none of it).
    env = {**os.environ, "COLUMNS": "200", "OXI_SERVER": "off"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    names = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done, names


@pytest.mark.parametrize(
    "args",
    [
        (),  # `oxi` alone: its help, exit status 2 (Click's no-args-is-help)
        ("--help",),
        ("-h",),
        ("--version",),
        ("cdl", "--help"),
        ("resize", "--help"),
        ("colorspace", "--help"),
        ("run", "--help"),
        ("info", "--help"),
        ("probe", "--help"),
    ],
    ids=lambda args: " ".join(args) or "bare",
)
def test_help_imports_no_heavy_library(args):
    done, names = imported(*args)
    assert done.returncode == (0 if args else 2), done.stderr[-2000:]
    assert ("oxi " if args == ("--version",) else "Usage") in done.stdout
    assert sorted(names & HEAVY) == []


def test_a_real_command_still_runs_and_loads_what_it_needs(plate, tmp_path):
    """The same check sees a job's imports: a CDL on a file (op classes reached through the lazy ops package)."""
    out = tmp_path / "out.exr"
    done, names = imported("cdl", str(plate), str(out), "--slope", "1.1", "--backend", "cpu")
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.exists()
    assert {"numpy", "numba", "OpenEXR"} <= names


def test_float32_max_spelled_out_is_numpys():
    """ops/base.py writes float32's maximum out so that ops import without numpy."""
    assert float(np.finfo(np.float32).max) == FLOAT32_MAX
