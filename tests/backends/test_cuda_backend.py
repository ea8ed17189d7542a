"""The CUDA backend's own machinery (the rest runs in the tests over every backend): transfers through pinned
chunks used in turn, planes given away with an upload, its device pool, and `auto` never weighing the simulator."""

from __future__ import annotations

import numpy as np
import pytest

from tests import backends_under_test as under_test


@pytest.fixture(scope="module")
def cuda_backend():
    return under_test.opened("cuda")


@pytest.fixture
def tiny_chunks(cuda_backend):
    """The device's staging with 64-byte chunks, so a 7x9 plane spans several of them in both buffers."""
    from oxi_cli.backends.cuda.transfers import Staging

    device = cuda_backend._device
    kept = device.staging
    with device.gpu:
        device.staging = Staging(device.stream, chunk=64)
    yield cuda_backend
    device.staging = kept


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_planes_go_up_and_come_back_bit_for_bit_across_chunks(tiny_chunks, dtype):
    rng = np.random.default_rng(7)
    planes = [rng.uniform(-3, 3, (7, 9)).astype(dtype) for _ in range(3)]
    planes[1][2, 3] = np.nan
    planes[2][0, 0] = np.inf
    handle = tiny_chunks.upload(planes)
    back = tiny_chunks.download_planes(handle, dtype)
    for sent, got in zip(planes, back, strict=True):
        assert got.dtype == dtype and got.flags.c_contiguous
        np.testing.assert_array_equal(got.view(np.uint8), sent.view(np.uint8))


def test_half_widens_and_narrows_as_the_host_converts(tiny_chunks):
    halves = np.arange(0, 1 << 16, 997, dtype=np.uint16).view(np.float16)[:63].reshape(7, 9).copy()
    handle = tiny_chunks.upload([halves])
    wide = tiny_chunks.download_planes(handle, np.float32)[0]
    np.testing.assert_array_equal(wide, halves.astype(np.float32))
    again = tiny_chunks.download_planes(tiny_chunks.upload([wide]), np.float16)[0]
    from oxi_cli.backends.cpu.kernels.half import converted

    # The host's narrowing (a signalling NaN comes back quiet, as kernels/half.py says), not numpy's (it keeps it).
    np.testing.assert_array_equal(again.view(np.uint16), converted(wide, np.float16).view(np.uint16))


def test_a_download_lands_in_the_planes_given_away_with_the_upload(cuda_backend):
    planes = [np.full((4, 5), float(c), np.float16) for c in range(4)]
    handle = cuda_backend.upload(planes, adopt=True)
    assert cuda_backend.download_planes(handle, np.float16)[2] is planes[2]
    assert cuda_backend.download_planes(handle, np.float16)[2] is not planes[2]  # given once


def test_a_collected_image_gives_its_device_array_to_the_next_of_its_size(cuda_backend):
    import gc

    first = cuda_backend.allocate(3, 11, 4)
    kept = first.data
    del first
    gc.collect()
    assert cuda_backend.allocate(3, 11, 4).data is kept


def test_auto_never_weighs_the_simulator(monkeypatch):
    from oxi_cli.backends.cuda import devices

    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    index, why = devices.auto_device(thorough=True)
    assert index is None and "simulator" in why
    assert devices.listed() == ([], None, None) and devices.describe_devices([]) == []


def test_a_numba_cuda_too_old_for_the_kernels_is_no_cuda_backend(monkeypatch):
    """numba's older CUDA target cannot compile the CPU loops the kernels call (on an H100 machine it failed every
    colour op while auto had picked CUDA): auto must not weigh it, and --backend cuda says what to install."""
    from oxi_cli.backends.cuda import devices

    monkeypatch.setattr(devices, "_numba_cuda_version", lambda: (0, 20, 1))
    assert not devices.present()
    assert devices.too_old() == ("the CUDA backend needs numba-cuda 0.30.4 or later (0.20.1 is installed; "
                                 "pip install 'oxi[cuda]')")
    with pytest.raises(RuntimeError, match="needs numba-cuda 0.30.4"):
        devices.list_devices.__wrapped__()
    monkeypatch.setattr(devices, "_numba_cuda_version", lambda: None)
    assert "or later (none is installed; pip install 'oxi[cuda]')" in devices.too_old()
