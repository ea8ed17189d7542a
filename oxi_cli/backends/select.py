"""Pick the compute backend from --backend / OXI_BACKEND / --device: auto, a wgpu GPU, or the Numba CPU."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from oxi_cli.backends.base import Backend
from oxi_cli.errors import BackendUnavailable, OxiError, UsageError

KINDS = ("auto", "cpu", "gpu")


@dataclass(frozen=True)
class Choice:
    """What `auto` (or an explicit kind) resolves to, and the one-line reason `oxi probe` prints."""

    kind: str  # "gpu" | "cpu"
    adapter: int | None
    reason: str


def get_backend(kind: str | None = "auto", device: int | None = None, threads: int | None = None) -> Backend:
    """`auto` (or None): OXI_BACKEND if set, else a hardware GPU (discrete before integrated), else the CPU;
    software adapters (llvmpipe/lavapipe) rank below the CPU. `gpu`: the best adapter of any kind, software
    included, or adapter `device`; failures raise BackendUnavailable. `cpu`: the Numba backend with `threads`.
    With `auto`, a GPU that fails to open is reported on stderr and the CPU backend is used.
    """
    kind = resolve_kind(kind)
    if kind == "cpu":
        if device is not None:
            raise UsageError("--device picks a GPU adapter; it cannot be used with --backend cpu")
        return _cpu(threads)
    if kind == "gpu":
        return _gpu(device)
    choice = auto_choice(device)
    if choice.kind == "cpu":
        return _cpu(threads)
    try:
        return _gpu(choice.adapter)
    except OxiError as exc:
        warn(f"{exc}; using the CPU backend")
        return _cpu(threads)


def resolve_kind(kind: str | None) -> str:
    """An explicit cpu/gpu wins; `auto` or None defers to OXI_BACKEND, then means auto."""
    kind = (kind or "auto").strip().lower()
    if kind == "auto":
        kind = (os.environ.get("OXI_BACKEND") or "auto").strip().lower()
        if kind not in KINDS:
            raise UsageError(f"OXI_BACKEND must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind not in KINDS:
        raise UsageError(f"--backend must be one of {', '.join(KINDS)}, got {kind!r}")
    return kind


def auto_choice(device: int | None = None, adapters: list[Any] | None = None) -> Choice:
    """Decide `auto` without opening a device; `adapters` (AdapterInfo list) saves a second enumeration."""
    if device is not None:
        return Choice("gpu", device, f"--device {device} was asked for")
    from oxi_cli.backends.gpu import device as gpu_device

    if adapters is None:
        if not gpu_device.may_have_hardware_gpu():
            return Choice("cpu", None, "no GPU device node (/dev/dri/renderD*, /dev/nvidia*) on this machine")
        try:
            adapters = gpu_device.list_adapters()
        except Exception as exc:  # no wgpu, no loader, driver crash: auto must still work
            return Choice("cpu", None, f"wgpu could not list adapters ({exc.__class__.__name__}: {exc})")
    best = gpu_device.best(adapters, gpu_only=True)
    if best is None:
        found = ", ".join(f"{a.name} ({a.kind})" for a in adapters) or "none"
        return Choice("cpu", None, f"no discrete or integrated GPU (adapters: {found}); Numba CPU ranks above "
                                   "software adapters")
    return Choice("gpu", best.index, f"{best.kind} GPU {best.name} via {best.api} ranks first")


def warn(message: str) -> None:
    print(f"oxi: warning: {message}", file=sys.stderr)


def _cpu(threads: int | None) -> Backend:
    from oxi_cli.backends.cpu.backend import CpuBackend

    return CpuBackend(threads)


def _gpu(device: int | None) -> Backend:
    try:
        from oxi_cli.backends.gpu import device as gpu_device
        from oxi_cli.backends.gpu.backend import WgpuBackend
    except ImportError as exc:
        raise BackendUnavailable(f"the GPU backend needs the wgpu package ({exc}); pip install wgpu") from None
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
