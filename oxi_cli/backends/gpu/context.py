"""An opened GPU adapter: its device, compiled pipelines and buffer pool (once per process), and the image
buffers oxi keeps on it."""

from __future__ import annotations

import functools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import wgpu

from oxi_cli.backends.gpu.device import AdapterInfo, describe, raw_adapters
from oxi_cli.backends.gpu.shaders import PipelineCache
from oxi_cli.errors import BackendUnavailable, GpuFailure

# Offsets of bound windows are multiples of this: the largest min-storage-buffer-offset-alignment
# WebGPU allows, so it is valid on every adapter.
ALIGN = 256
WORKGROUP = 256
MAX_GROUPS = 65535
MAX_DIM = 1 << 20
# Staging buffers (two each way, used in turn) bound the extra host memory of a transfer: all four are host memory in
# the RSS once touched. Measured on an H200 (8192x4320 RGBA float32, 8 copy threads): 64 MiB chunks upload at 23 GB/s
# and download at 17, 256 MiB at 27 and 20. At 128 MiB an 8K GPU job's peak RSS was 400-670 MB above the CPU path's
# (issue 9 wants 200 at most) for transfers of ~15 ms; 32 MiB gave back 190 MB (a 16-core host with an H100 GPU).
STAGING_BYTES = 32 << 20
TABLE_SLABS = 4
# Resident size of a process with wgpu's library and a device open, before any pixel (2-core x86-64 machine (AVX-512)).
RUNTIME_BYTES = 224 << 20
POOL_BYTES = 2 << 30  # at most, and a quarter of the device's memory  # lut3d.wgsl binds a table as up to four windows
ELEMENT_BYTES = {True: 16, False: 4}  # bytes of one shader element: vec4<f32> or f32
STORAGE_USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST


def round_up(n: int, m: int) -> int:
    return -(-n // m) * m


@dataclass(eq=False)
class GpuImage:
    """A float32 (H, W, C) image in one device buffer, pixels row-major, channels interleaved.

    When the handle is collected its buffer goes back to the device's BufferPool for the next image.
    """

    buffer: Any
    shape: tuple[int, int, int]
    _recycle: Any = field(default=None, repr=False)
    # Host planes the caller gave away with the upload (`adopt`): the download of this image lands in them.
    spare: list[np.ndarray] | None = field(default=None, repr=False)

    @property
    def nbytes(self) -> int:
        h, w, c = self.shape
        return h * w * c * 4

    def release(self) -> None:
        """Free the device memory now rather than keeping it for reuse."""
        if self._recycle is not None:
            self._recycle.detach()
        self.buffer.destroy()


class BufferPool:
    """Buffers of collected images, kept for the next image of the same size: on an H200, allocating a
    540 MB buffer takes ~20 ms, as long as filling it. Holds at most `limit` bytes, oldest dropped first.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._free: deque[Any] = deque()
        self._bytes = 0
        self._lock = threading.Lock()  # buffers come back from the garbage collector, on any thread

    def take(self, size: int) -> Any | None:
        with self._lock:
            for buf in self._free:
                if buf.size == size:
                    self._free.remove(buf)
                    self._bytes -= size
                    return buf
        return None

    def clear(self) -> None:
        """Drop every kept buffer (their memory goes back to the driver)."""
        with self._lock:
            self._free.clear()
            self._bytes = 0

    def give(self, buffer: Any) -> None:
        with self._lock:
            if buffer.size > self.limit:
                return
            self._free.append(buffer)
            self._bytes += buffer.size
            while self._bytes > self.limit:
                self._bytes -= self._free.popleft().size


@dataclass
class _Context:
    """One opened adapter: its device and compiled pipelines, shared by every backend in the process."""

    info: AdapterInfo
    device: Any
    pipelines: PipelineCache
    pool: BufferPool


_CONTEXTS: dict[int, _Context] = {}
_OPENING = threading.Lock()
# Limits requested at the adapter's own values: the defaults cap a buffer at 256 MiB.
_OWN_LIMITS = ("max-buffer-size", "max-storage-buffer-binding-size", "max-storage-buffers-per-shader-stage")


def opened() -> dict[int, str]:
    """Adapters this process has a device open on, by index, with their names (a long-lived process keeps them
    between jobs)."""
    return {i: _CONTEXTS[i].info.name for i in sorted(_CONTEXTS)}


def open_adapter(index: int) -> _Context:
    """Open adapter `index` once per process (device requested with the adapter's own limits); a second thread
    asking meanwhile waits for the first's device rather than opening another."""
    with _OPENING:
        return _open_adapter(index)


def _open_adapter(index: int) -> _Context:
    ctx = _CONTEXTS.get(index)
    if ctx is not None:
        return ctx
    adapters = raw_adapters()
    if not 0 <= index < len(adapters):
        raise BackendUnavailable(
            f"--device {index} does not exist: wgpu found {len(adapters)} adapter(s); see `oxi probe`"
        )
    adapter = adapters[index]
    info = describe(index, adapter)
    try:
        device = adapter.request_device_sync(
            label="oxi", required_limits={k: adapter.limits[k] for k in _OWN_LIMITS}
        )
    except Exception as exc:  # wgpu raises plain RuntimeError/GPUError subclasses here
        raise BackendUnavailable(
            f"GPU adapter {index} ({info.name}) could not be opened: {_one_line(exc)}; use --backend cpu"
        ) from exc
    pool = BufferPool(min(POOL_BYTES, (info.memory or int(device.limits["max-buffer-size"])) // 4))
    ctx = _CONTEXTS[index] = _Context(info, device, PipelineCache(device), pool)
    return ctx


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__


def gpu_errors(method: Callable) -> Callable:
    """Device loss, out-of-memory and driver failures become one-line GpuFailures (exit 1)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except wgpu.GPUError as exc:
            raise GpuFailure(
                f"GPU {self.adapter.name} failed in {method.__name__}: {_one_line(exc)}; "
                "retry with --backend cpu"
            ) from exc

    return wrapper
