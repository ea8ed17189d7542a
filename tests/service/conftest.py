"""Fixtures the service's tests share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import OpenEXR
import pytest


@pytest.fixture
def big(tmp_path: Path) -> Path:
    """Large enough that a blur of it runs for seconds on two cores."""
    rng = np.random.default_rng(3)
    channels = {c: rng.uniform(0, 2, (2160, 4096)).astype(np.float16) for c in "RGBA"}
    path = tmp_path / "big.exr"
    OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}, channels).write(str(path))
    return path
