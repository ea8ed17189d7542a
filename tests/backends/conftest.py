"""GPU fixtures: a wgpu backend on the best adapter of any kind (lavapipe in CI), or a skip when none exists.

With OXI_REQUIRE_GPU=1 (set by .ci/run) a missing adapter fails the tests instead: CI must prove the GPU path.
"""

from __future__ import annotations

import os

import pytest

# Small enough that the 37x23 test images span several binding windows, staging chunks and LUT slabs.
SMALL_WINDOW = 4096
SMALL_TABLE_WINDOW = 64 * 12 * 200  # 12800 LUT entries: a 33^3 table needs three slabs
SMALL_STAGING = 1024


def require_gpu() -> bool:
    return os.environ.get("OXI_REQUIRE_GPU", "") not in ("", "0")


def _open(**kwargs):
    from oxi_cli.errors import BackendUnavailable

    try:
        from oxi_cli.backends.gpu.backend import WgpuBackend

        return WgpuBackend(**kwargs)
    except (ImportError, BackendUnavailable) as exc:
        message = f"no GPU adapter: {exc}"
        if require_gpu():
            pytest.fail(f"{message} (OXI_REQUIRE_GPU=1: CI must run the GPU tests)", pytrace=False)
        pytest.skip(message)


@pytest.fixture(scope="session")
def gpu_backend():
    """The best adapter of any kind, as `--backend gpu` picks it."""
    return _open()


@pytest.fixture(scope="session")
def small_window_gpu(gpu_backend):
    """Same device and pipelines, but tiny binding windows, LUT slabs and staging chunks."""
    return _open(
        adapter=gpu_backend.adapter.index,
        window_bytes=SMALL_WINDOW,
        table_window_bytes=SMALL_TABLE_WINDOW,
        staging_bytes=SMALL_STAGING,
    )
