"""Host <-> device copies at the bus's speed: pinned staging buffers used in turn, so the host's copy of one chunk
into (out of) pinned memory overlaps the DMA of the next (last), and half is widened (narrowed) on the device."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from numba import cuda

from oxi_cli.backends.cuda import kernels
from oxi_cli.host import cores

# Bytes of one staging chunk (two pinned host buffers and, for half, two device ones): big enough that a DMA's
# fixed cost (~10 us) is nothing, small enough that the first and last chunk's host copy, which nothing overlaps,
# are short.
CHUNK = 16 << 20
# Host copies into and out of pinned memory run in pieces on a few threads (numpy releases the GIL while copying):
# one thread's memcpy (~6-10 GB/s) is below the bus's 25+.
COPY_PIECE = 4 << 20
COPY_THREADS = min(4, cores())


@functools.lru_cache(maxsize=1)
def _copy_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max(COPY_THREADS, 1), thread_name_prefix="oxi-cuda-copy")


def _copy(src: np.ndarray, dst: np.ndarray) -> None:
    """dst[:] = src, in pieces on the copy pool when large."""
    n = src.shape[0]
    step = max(1, COPY_PIECE // src.itemsize)
    if n <= step:
        dst[:] = src
        return

    def piece(start: int) -> None:
        dst[start:start + step] = src[start:start + step]

    list(_copy_pool().map(piece, range(0, n, step)))


class Staging:
    """Two pinned host buffers (and two device buffers of half bits) used in turn, with the events that say when
    the device is done with each."""

    def __init__(self, stream: Any, chunk: int = CHUNK) -> None:
        self.stream, self.chunk = stream, chunk
        self.pinned = [cuda.pinned_array(chunk, np.uint8) for _ in range(2)]
        self.halves = [cuda.device_array(chunk // 2, np.uint16) for _ in range(2)]
        self.events = [cuda.event() for _ in range(2)]
        self._turn = 0

    @property
    def host_bytes(self) -> int:
        return 2 * self.chunk

    def _chunks(self, planes: Sequence[Any], itemsize: int) -> list[tuple[int, int, int, int]]:
        """(plane, start, stop, buffer) of every chunk of every plane, the buffers in turn."""
        step = self.chunk // itemsize
        out = []
        for k, plane in enumerate(planes):
            for start in range(0, plane.shape[0], step):
                out.append((k, start, min(plane.shape[0], start + step), self._next()))
        return out

    def _next(self) -> int:
        self._turn ^= 1
        return self._turn

    def up(self, sources: Sequence[np.ndarray], targets: Sequence[Any]) -> None:
        """Flat host planes (all float32 or all float16) into flat float32 device planes."""
        half = sources[0].dtype == np.float16
        kind = np.uint16 if half else np.float32
        for k, start, stop, j in self._chunks(sources, np.dtype(kind).itemsize):
            self.events[j].synchronize()  # the last DMA out of this pinned buffer has run
            staged = self.pinned[j].view(kind)[: stop - start]
            _copy(sources[k].view(kind)[start:stop], staged)
            if half:
                bits = self.halves[j][: stop - start]
                bits.copy_to_device(staged, stream=self.stream)
                kernels.convert[kernels.grid(stop - start), kernels.THREADS, self.stream](bits, targets[k][start:stop])
            else:
                targets[k][start:stop].copy_to_device(staged, stream=self.stream)
            self.events[j].record(self.stream)

    def down(self, sources: Sequence[Any], targets: Sequence[np.ndarray]) -> None:
        """Flat float32 device planes into flat host planes (all float32 or all float16, narrowed on the device);
        the host copy of each chunk overlaps the DMA of the next."""
        half = targets[0].dtype == np.float16
        kind = np.uint16 if half else np.float32
        pending: Callable[[], None] | None = None
        for k, start, stop, j in self._chunks(sources, np.dtype(kind).itemsize):
            staged = self.pinned[j].view(kind)[: stop - start]
            if half:
                bits = self.halves[j][: stop - start]
                kernels.convert[kernels.grid(stop - start), kernels.THREADS, self.stream](sources[k][start:stop], bits)
                bits.copy_to_host(staged, stream=self.stream)
            else:
                sources[k][start:stop].copy_to_host(staged, stream=self.stream)
            self.events[j].record(self.stream)
            if pending is not None:
                pending()
            pending = functools.partial(self._drain, j, staged, targets[k].view(kind)[start:stop])
        if pending is not None:
            pending()

    def _drain(self, j: int, staged: np.ndarray, target: np.ndarray) -> None:
        self.events[j].synchronize()
        _copy(staged, target)
