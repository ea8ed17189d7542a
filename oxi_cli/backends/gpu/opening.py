"""Opening the GPU backend as --backend gpu asks: adapter `device`, else the best of any kind, software included."""

from __future__ import annotations

from oxi_cli.backends.gpu import device as gpu_device
from oxi_cli.backends.gpu.backend import WgpuBackend
from oxi_cli.errors import BackendUnavailable


def open_gpu(device: int | None, threads: int | None = None) -> WgpuBackend:
    """The registry's opener (backends/registry.py); `threads` is the CPU's and has no meaning here."""
    if device is None:
        try:
            adapters = gpu_device.list_adapters()
        except Exception as exc:
            raise BackendUnavailable(f"wgpu could not list GPU adapters: {exc}; see `oxi probe`") from None
        chosen = gpu_device.best(adapters, gpu_only=False)
        if chosen is None:
            hint = "; ".join(gpu_device.missing_pieces()) or gpu_device.SOFTWARE_HINT
            raise BackendUnavailable(f"no GPU adapter found ({hint})")
        device = chosen.index
    return WgpuBackend(device)
