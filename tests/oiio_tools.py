"""OpenImageIO's command-line tools (oiiotool, maketx) from the `openimageio` wheel, the test extra: the
trusted implementations oxi's resize, colour conversions and texture reading are checked against."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def _tool(name: str) -> str | None:
    """The binary the `openimageio` wheel ships, else one on PATH."""
    try:
        import OpenImageIO

        path = Path(OpenImageIO.__file__).parent / "bin" / name
        if path.is_file():
            return str(path)
    except ImportError:
        pass
    return shutil.which(name)


OIIOTOOL = _tool("oiiotool")
MAKETX = _tool("maketx")
needs_oiiotool = pytest.mark.skipif(OIIOTOOL is None, reason="needs oiiotool (PyPI openimageio, the test extra)")
needs_maketx = pytest.mark.skipif(MAKETX is None, reason="needs maketx (PyPI openimageio, the test extra)")


def oiiotool(*args: str, env: dict[str, str] | None = None) -> None:
    """Run oiiotool; its own message on failure."""
    assert OIIOTOOL is not None
    res = subprocess.run([OIIOTOOL, *args], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, f"oiiotool {' '.join(args)}: {res.stderr or res.stdout}"


def maketx(*args: str) -> None:
    assert MAKETX is not None
    res = subprocess.run([MAKETX, *args], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, f"maketx {' '.join(args)}: {res.stderr or res.stdout}"
