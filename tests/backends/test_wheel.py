"""The built wheel carries the WGSL shaders: install it in a fresh venv and run a GPU op from there."""

from __future__ import annotations

import subprocess

from tests.installed import clean_env, install_wheel, python

PROGRAM = """
import sys, numpy as np, oxi_cli
from oxi_cli.backends.gpu.backend import WgpuBackend
from oxi_cli.backends.gpu.shaders import wgsl_dir
from oxi_cli.ops import Cdl
assert oxi_cli.__file__.startswith(sys.prefix), f"imported {oxi_cli.__file__}, not the installed wheel"
assert str(wgsl_dir()).startswith(sys.prefix), f"shaders from {wgsl_dir()}, not the installed wheel"
gpu = WgpuBackend(int(sys.argv[1]))
h = gpu.upload(np.full((3, 5, 4), 0.5, np.float32))
gpu.color_chain(h, h, [Cdl(slope=2.0, offset=0.25)], False)
out = gpu.download(h)
assert np.allclose(out[..., :3], 1.25) and np.allclose(out[..., 3], 0.5), out
print("ok", wgsl_dir())
"""


def test_installed_wheel_runs_a_gpu_op_with_its_own_shaders(oxi_wheel, tmp_path, gpu_backend):
    venv = install_wheel(oxi_wheel, tmp_path)
    res = subprocess.run(
        [str(python(venv)), "-c", PROGRAM, str(gpu_backend.adapter.index)],
        capture_output=True, text=True, env=clean_env(), cwd=tmp_path, timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("ok")
