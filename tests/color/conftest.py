"""Colour-management fixtures: every registered backend (lavapipe's GPU in CI) and a small HDR test image with
negatives, NaN and +-Inf."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def backend(each_backend):
    """The colour tests against OCIO run on each registered backend (tests/conftest.py's each_backend)."""
    return each_backend


@pytest.fixture(scope="session")
def hdr_image() -> np.ndarray:
    """16x16 RGB float32: display-range values, scene-linear HDR up to 1e4, negatives, tiny values, and a
    few pixels holding NaN, +Inf or -Inf in one channel."""
    rng = np.random.default_rng(11)
    img = rng.uniform(-0.25, 1.25, (16, 16, 3))
    img[4:8] = rng.lognormal(-1.0, 2.5, (4, 16, 3)) * rng.choice([-1.0, 1.0, 1.0, 1.0], (4, 16, 3))
    img[8:10] = rng.uniform(-1e-4, 1e-3, (2, 16, 3))
    img[10:12] = rng.uniform(0.0, 1e4, (2, 16, 3))
    img = img.astype(np.float32)
    img[0, :3] = np.diag([np.nan] * 3)
    img[1, :3] = np.diag([np.inf] * 3)
    img[2, :3] = np.diag([-np.inf] * 3)
    return img
