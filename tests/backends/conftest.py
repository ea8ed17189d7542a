"""GPU fixtures: the wgpu backend as `--backend gpu` opens it (lavapipe in CI), and one with tiny binding windows.

Without an adapter the tests skip; with OXI_REQUIRE_GPU=1 (set by .ci/run) they fail: CI must prove the GPU path.
"""

from __future__ import annotations

import pytest

from tests import backends_under_test as under_test

# Small enough that the 37x23 test images span several binding windows, staging chunks and LUT slabs.
SMALL_WINDOW = 4096
SMALL_TABLE_WINDOW = 64 * 12 * 200  # 12800 LUT entries: a 33^3 table needs three slabs
SMALL_STAGING = 1024


@pytest.fixture(scope="session")
def gpu_backend():
    """The best adapter of any kind, as `--backend gpu` picks it: the object each_backend's "gpu" is."""
    return under_test.opened("gpu")


@pytest.fixture(scope="session")
def small_window_gpu(gpu_backend):
    """Same device and pipelines, but tiny binding windows, LUT slabs and staging chunks."""
    from oxi_cli.backends.gpu.backend import WgpuBackend
    from oxi_cli.errors import BackendUnavailable

    try:
        return WgpuBackend(gpu_backend.adapter.index, window_bytes=SMALL_WINDOW,
                           table_window_bytes=SMALL_TABLE_WINDOW, staging_bytes=SMALL_STAGING)
    except BackendUnavailable as exc:
        under_test.unavailable("GPU", exc)
