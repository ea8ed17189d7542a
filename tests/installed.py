"""oxi as pip installs it: a wheel built from a copy of this tree, installed in a new virtual environment that
sees this environment's libraries (numpy, wgpu, pip) through a .pth file but not its oxi."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "oxi_cli", "wgsl", "bin")


def _setuptools_usable() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 61


def clean_env() -> dict[str, str]:
    """This environment without PYTHONPATH, which would put the tree's own oxi_cli before the installed one."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def build_wheel(tmp_path: Path) -> Path:
    """The wheel of this tree, built from a copy of it (leaving no build folders in the tree) into `tmp_path`."""
    src = tmp_path / "src"
    src.mkdir(parents=True)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, src / name)
    dist = tmp_path / "dist"
    # Build with the setuptools already here when it can; an isolated build has to fetch one from PyPI.
    isolation = ["--no-build-isolation"] if _setuptools_usable() else []
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", str(dist), str(src)],
                   check=True, env=clean_env(), capture_output=True, timeout=300)
    (wheel,) = dist.glob("oxi-*.whl")
    return wheel


def install_wheel(wheel: Path, tmp_path: Path) -> Path:
    """`wheel` installed in a new virtual environment at `tmp_path`/venv; returns the venv's folder. Its
    site-packages is `purelib(venv)`."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    # .pth lines only add folders, so an editable oxi's import hook there never runs.
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib(venv), "outer_env.pth").write_text("\n".join(sorted(outer)) + "\n")
    subprocess.run([str(python(venv)), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed",
                    str(wheel)], check=True, env=clean_env(), capture_output=True, timeout=300)
    return venv


def python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def purelib(venv: Path) -> Path:
    return Path(subprocess.run([str(python(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True, env=clean_env()).stdout.strip())
