"""The one protocol every compute backend implements, and the device facts the planner reads."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from oxi_cli.backends.registry import HOST
from oxi_cli.errors import ProcessingError
from oxi_cli.ops import ColorOp, ImageOp

# Resident size of a process before any pixel arrives, measured on a 2-core x86-64 machine (AVX-512): Python + numpy +
# OpenEXR + the Numba kernels of a blur/CDL/resize chain = 146 MiB; the wgpu backend adds its library and device.
CPU_RUNTIME_BYTES = 160 << 20


@dataclass(frozen=True)
class DeviceLimits:
    """What one device can hold and bind, and what the planner must know of it; `detected` is False when
    these are defaults, not measurements.

    `shares_host_memory`: the device computes in host RAM (the CPU, a software or integrated GPU), so its
    bytes count against the RAM budget too. `adopts_host_arrays`: the first handle can be the decoded planes
    themselves (no device copy). `host_overhead`: host bytes the backend holds besides pixels (staging
    buffers). `runtime_bytes`: the process's own resident size with this backend loaded.
    """

    max_buffer_bytes: int
    max_binding_bytes: int
    max_dim: int
    total_memory: int
    usable_memory: int
    detected: bool
    shares_host_memory: bool = True
    adopts_host_arrays: bool = False
    host_overhead: int = 0
    runtime_bytes: int = CPU_RUNTIME_BYTES


def host_label() -> str:
    """The host as --json names the device a job ran on, known without opening its backend."""
    import platform

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def host_limits() -> DeviceLimits:
    """The machine's RAM seen as a device: what the CPU backend offers, known without importing Numba."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = page * os.sysconf("SC_PHYS_PAGES")
    return DeviceLimits(
        max_buffer_bytes=total,
        max_binding_bytes=total,
        max_dim=1 << 20,
        total_memory=total,
        usable_memory=int(page * os.sysconf("SC_AVPHYS_PAGES") * 0.6),
        detected=True,
        adopts_host_arrays=True,
    )


class ImageOpTable(dict[str, Callable[..., None]]):
    """Image op name -> the backend method that computes it: what a backend declares it runs (tests/backends
    check every table against every image op), found by the op's name rather than by attribute lookup."""

    def __init__(self, backend: str) -> None:
        super().__init__()
        self.backend = backend

    def register(self, name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
        """Decorate the method that computes image op `name`."""

        def add(method: Callable[..., None]) -> Callable[..., None]:
            self[name] = method
            return method

        return add

    def method(self, op: ImageOp) -> Callable[..., None]:
        found = self.get(op.kernel_name())
        if found is None:
            raise ProcessingError(f"the {self.backend} backend has no {op.kernel_name()} kernel; use another --backend")
        return found


class Selected(Protocol):
    """A backend as selection hands it to a batch (select.DeferredBackend, or HostOnly): why it was chosen, the
    estimate it was weighed by (every backend's seconds; None when no job was weighed) and, when `auto` chose
    by it, `weighed`; whether it has opened (asking never waits), and the switch to the host after a device
    failure mid-job (raises the error again where there is no fallback)."""

    name: str
    reason: str
    estimate: Any
    weighed: Any
    fell_back: bool

    @property
    def ready(self) -> bool: ...

    def fall_back(self, error: BaseException) -> Any: ...


class HostOnly:
    """Stands in for a backend when a chain has nothing to compute (a copy or re-encode): plans it without
    waiting for a device that will never be used."""

    name = HOST
    reason = ""
    estimate = weighed = None
    fell_back = False
    ready = True

    def limits(self) -> DeviceLimits:
        return host_limits()

    def fall_back(self, error: BaseException) -> Any:
        raise error


@runtime_checkable
class Backend(Protocol):
    """What the executor calls, and nothing more.

    Images live on the backend as handles of shape (height, width, channels) holding float32 values (a half
    input may stay half where the backend computes on it directly: the CPU does). Colour chains touch
    channels 0..2 (R, G, B), and channel 3 as alpha when `has_alpha`; `src` and `dst` may be the same
    handle for a colour chain, never for an image op.
    """

    name: str

    @property
    def device_label(self) -> str:
        """What it computes on, as a file's --json record names it ("NVIDIA H200 (Vulkan)")."""
        ...

    def limits(self) -> DeviceLimits: ...

    def upload(self, planes: Sequence[np.ndarray], adopt: bool = False, half: bool = False) -> Any:
        """C (H, W) planes, float32 or float16 -> handle. Hints a backend may ignore: `adopt`, the caller gives
        the planes away (a host-memory backend may compute in them); `half`, whatever is written into this
        handle is stored as half anyway, so float16 may stay half (otherwise no intermediate is rounded)."""
        ...

    def allocate(self, height: int, width: int, channels: int, half: bool = False) -> Any:
        """A handle for an image op's result; `half` (a hint): it only goes on to be stored as half."""
        ...

    def download_planes(self, handle: Any, dtype: type = np.float32) -> list[np.ndarray]:
        """Handle -> one C-contiguous (H, W) array per channel, float32 or float16 (what writers take)."""
        ...

    def color_chain(self, src: Any, dst: Any, ops: Sequence[ColorOp], has_alpha: bool) -> None:
        """Consecutive colour ops fused: each pixel read and written once (see oxi_cli/ops/program.py)."""
        ...

    def spatial(self, src: Any, dst: Any, op: ImageOp) -> None:
        """One image op from `src` into `dst`, whose shape is the op's output size."""
        ...

    def finish(self) -> None:
        """Wait until every call made so far has run (for timing: a download waits by itself)."""
        ...


def adoptable(plane: np.ndarray, dtype: type) -> bool:
    """Whether a plane given away with an upload (`adopt`) can hold results of `dtype` as it is."""
    return plane.dtype == dtype and plane.flags.c_contiguous and plane.flags.writeable
