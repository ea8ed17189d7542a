"""The built wheel carries the WGSL shaders: install it in a fresh venv and run a GPU op from there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


def _setuptools_usable() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 61


def test_installed_wheel_runs_a_gpu_op_with_its_own_shaders(tmp_path, gpu_backend):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("oxi_cli", "wgsl"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path / "dist"
    # Build with the setuptools already here when it can; an isolated build has to fetch one from PyPI.
    isolation = ["--no-build-isolation"] if _setuptools_usable() else []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", str(dist), str(src)],
        check=True, env=env, capture_output=True, timeout=300,
    )
    (wheel,) = dist.glob("oxi-*.whl")

    # A fresh venv that sees this environment's dependencies (numpy, wgpu, pip) through a .pth file but not
    # its oxi: .pth lines only add folders, so an editable oxi's import hook there never runs.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, env=env,
    ).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "outer_env.pth").write_text("\n".join(sorted(outer)) + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed", str(wheel)],
        check=True, env=env, capture_output=True, timeout=300,
    )
    res = subprocess.run(
        [str(python), "-c", PROGRAM, str(gpu_backend.adapter.index)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("ok")
