"""Planner fixtures: plates with HDR, NaN and Inf in every channel kind, and every registered backend (lavapipe's
GPU in CI; with OXI_REQUIRE_GPU=1, set by .ci/run, one that will not open fails the tests instead of skipping)."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.image import Image, ImageMeta
from tests.reference import hdr_image

# Odd on purpose: no band, tile, chunk or resize period lines up with the image edges.
WIDTH, HEIGHT = 1031, 777


def plate(width: int = WIDTH, height: int = HEIGHT, seed: int = 0) -> Image:
    """RGBA half, a float depth and a uint32 id: what a render's beauty pass carries."""
    planes = {c: hdr_image((height, width), seed + i, nonfinite=True).astype(np.float16) for i, c in enumerate("RGBA")}
    planes["Z"] = hdr_image((height, width), seed + 7, nonfinite=True)
    planes["id"] = np.random.default_rng(seed + 9).integers(0, 2**32 - 1, (height, width), dtype=np.uint32)
    types = {**{c: "half" for c in "RGBA"}, "Z": "float", "id": "uint32"}
    return Image(width, height, planes, ImageMeta("exr", types, "zip", {}))


@pytest.fixture
def backend(each_backend):
    """Each test runs on each registered backend (tests/conftest.py's each_backend)."""
    return each_backend
