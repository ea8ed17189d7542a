"""Planner fixtures: plates with HDR, NaN and Inf in every channel kind, and the GPU backend (lavapipe in CI).

With OXI_REQUIRE_GPU=1 (set by .ci/run) a missing adapter fails the GPU tests instead of skipping them.
"""

from __future__ import annotations

import os

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


def _gpu():
    from oxi_cli.backends.select import get_backend
    from oxi_cli.errors import BackendUnavailable

    backend = get_backend("gpu")
    try:
        backend.resolve()  # type: ignore[attr-defined]
    except BackendUnavailable as exc:
        message = f"no GPU adapter: {exc}"
        if os.environ.get("OXI_REQUIRE_GPU", "") not in ("", "0"):
            pytest.fail(f"{message} (OXI_REQUIRE_GPU=1: CI must run the GPU tests)", pytrace=False)
        pytest.skip(message)
    return backend


@pytest.fixture(scope="session")
def gpu():
    return _gpu()


@pytest.fixture(scope="session", params=["cpu", "gpu"])
def backend(request, cpu_backend):
    """Each test runs on the Numba CPU backend and on the wgpu backend."""
    return cpu_backend if request.param == "cpu" else request.getfixturevalue("gpu")
