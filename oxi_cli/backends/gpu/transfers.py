"""Pixels between host planes and device buffers: chunked through mapped staging buffers used in turn, half
travelling as half, the host side's copies in pieces on a small thread pool."""

from __future__ import annotations

import functools
import math
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import wgpu

from oxi_cli.backends.base import adoptable
from oxi_cli.backends.gpu.context import ALIGN, GpuImage, gpu_errors, round_up
from oxi_cli.errors import ProcessingError
from oxi_cli.host import cores

# Host copies to and from mapped staging memory run in pieces on several threads (numpy releases the GIL):
# one core's memcpy (~10 GB/s) would otherwise cap the transfer rate.
COPY_PIECE = 1 << 20  # values: a staging chunk is copied in 8 to 32 pieces
COPY_THREADS = min(8, cores())


class Transfers:
    """The backend's transfer methods (a part of WgpuBackend: it provides the device, pipelines, chunk sizes,
    staging pools and the dispatch helpers these use)."""

    @gpu_errors
    def upload(self, pixels: np.ndarray | Sequence[np.ndarray], adopt: bool = False, half: bool = False) -> GpuImage:
        """An (H, W, C) array or C (H, W) planes; float16 travels as half (half the bytes) and is widened on
        the device, anything else as float32. Planes are interleaved straight into the staging buffers, never
        into a whole-image host copy. The device holds float32 whatever `half` says; with `adopt`, planes that
        can hold the results (backends.base.adoptable) receive this image's download_planes()."""
        if isinstance(pixels, np.ndarray):
            if pixels.ndim != 3:
                raise ProcessingError(f"expected an (H, W, C) image, got shape {pixels.shape}")
            half = pixels.dtype == np.float16
            shape = pixels.shape
            sources = [np.ascontiguousarray(pixels, dtype=np.float16 if half else np.float32).reshape(-1)]
        else:
            half = all(p.dtype == np.float16 for p in pixels)
            shape = (*pixels[0].shape, len(pixels))
            sources = [np.ascontiguousarray(p, dtype=np.float16 if half else np.float32).reshape(-1) for p in pixels]
        img = self.allocate(*shape)
        dtype = np.dtype(np.float16 if half else np.float32)
        if adopt and not isinstance(pixels, np.ndarray) and all(adoptable(p, dtype) for p in pixels):
            img.spare = list(pixels)
        nbytes = math.prod(shape) * dtype.itemsize
        if half:
            # Halves travel as one run per plane, each copied whole; the device interleaves as it widens.
            planes, chunk = len(sources), self._planar_chunk(len(sources))
            raw = self._scratch_buffer("raw", chunk)
            convert = self.pipelines.get("half.wgsl", PACK=False)

            def fill_runs(view: memoryview, start: int, size: int) -> None:
                _runs(np.frombuffer(view, dtype, count=size // 2), sources, start // 2 // planes, to_planes=False)

            def sink(encoder: Any, stage: Any, start: int, size: int) -> None:
                encoder.copy_buffer_to_buffer(stage, 0, raw, 0, round_up(size, 4))
                self._half_pass(encoder, convert, (raw, 0, round_up(size, 4)), (img.buffer, start * 2, size * 2),
                                size // 2, planes)

            self._stream_up(nbytes, chunk, fill_runs, sink)
        else:

            def fill(view: memoryview, start: int, size: int) -> None:
                _shuffle(np.frombuffer(view, dtype, count=size // 4), sources, start // 4, to_planes=False)

            def sink(encoder: Any, stage: Any, start: int, size: int) -> None:
                encoder.copy_buffer_to_buffer(stage, 0, img.buffer, start, round_up(size, 4))

            self._stream_up(nbytes, self._chunk, fill, sink)
        return img

    def download_planes(self, handle: GpuImage, dtype: type = np.float32) -> list[np.ndarray]:
        """One C-contiguous (H, W) array per channel, filled straight from the staging buffers; float16 is
        packed on the device and travels as half."""
        h, w, c = handle.shape
        spare, handle.spare = handle.spare, None
        if spare is None or len(spare) != c or any(p.dtype != dtype for p in spare):
            spare = [np.empty((h, w), dtype) for _ in range(c)]
        self._download_into(handle, [p.reshape(-1) for p in spare], np.dtype(dtype))
        return spare

    def download(self, handle: GpuImage, out: np.ndarray | None = None) -> np.ndarray:
        """float32 (H, W, C) by default; a float16 `out` is packed on the device and travels as half."""
        if out is None:
            out = np.empty(handle.shape, dtype=np.float32)
        if tuple(out.shape) != handle.shape or out.dtype not in (np.float32, np.float16):
            raise ProcessingError(
                f"download target must be float32 or float16 of shape {handle.shape}, "
                f"got {out.dtype} {out.shape}"
            )
        target = out if out.flags.c_contiguous else np.empty(out.shape, out.dtype)
        self._download_into(handle, [target.reshape(-1)], target.dtype)
        if target is not out:
            np.copyto(out, target)
        return out

    @gpu_errors
    def _download_into(self, handle: GpuImage, targets: list[np.ndarray], dtype: np.dtype) -> None:
        """The image's values, pixel-major, dealt out over `targets` (one flat array: as stored; C arrays: a
        channel each)."""

        nbytes = math.prod(handle.shape) * dtype.itemsize
        if dtype == np.float16:
            # Packed into one run per target plane on the device, so that each is copied out whole.
            planes, chunk = len(targets), self._planar_chunk(len(targets))
            raw = self._scratch_buffer("raw", chunk)
            convert = self.pipelines.get("half.wgsl", PACK=True)

            def drain_runs(view: memoryview, start: int, size: int) -> None:
                _runs(np.frombuffer(view, dtype, count=size // 2), targets, start // 2 // planes, to_planes=True)

            def source(encoder: Any, stage: Any, start: int, size: int) -> None:
                self._half_pass(encoder, convert, (handle.buffer, start * 2, size * 2), (raw, 0, round_up(size, 4)),
                                size // 2, planes)
                encoder.copy_buffer_to_buffer(raw, 0, stage, 0, round_up(size, 4))

            self._stream_down(nbytes, chunk, drain_runs, source)
        else:

            def drain(view: memoryview, start: int, size: int) -> None:
                _shuffle(np.frombuffer(view, dtype, count=size // 4), targets, start // 4, to_planes=True)

            def source(encoder: Any, stage: Any, start: int, size: int) -> None:
                encoder.copy_buffer_to_buffer(handle.buffer, start, stage, 0, round_up(size, 4))

            self._stream_down(nbytes, self._chunk, drain, source)

    def _stream_up(
        self, nbytes: int, chunk: int, fill: Callable[[memoryview, int, int], None],
        sink: Callable[[Any, Any, int, int], None],
    ) -> None:
        """Send `nbytes` to the device in chunks through two MAP_WRITE staging buffers used in turn; `fill`
        writes bytes [start, start + size) into the mapped staging memory."""
        usage = wgpu.BufferUsage.MAP_WRITE | wgpu.BufferUsage.COPY_SRC
        stages = self._stages(self._up_stages, usage, chunk)
        for k, start in enumerate(range(0, nbytes, chunk)):
            size = min(chunk, nbytes - start)
            stage = stages[k % 2]
            stage.map_sync(wgpu.MapMode.WRITE)  # waits until the GPU has copied its previous contents
            view = stage._experimental_get_mapped_range(0, round_up(size, 4))  # writable; wgpu <0.33 has it
            fill(view, start, size)
            del view  # the memory goes away at unmap
            stage.unmap()
            encoder = self.device.create_command_encoder()
            sink(encoder, stage, start, size)
            self.device.queue.submit([encoder.finish()])

    def _stream_down(
        self, nbytes: int, chunk: int, drain: Callable[[memoryview, int, int], None],
        source: Callable[[Any, Any, int, int], None],
    ) -> None:
        """Read `nbytes` back; `drain` takes bytes [start, start + size) from the mapped staging memory while
        the next chunk's copy runs."""
        usage = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
        stages = self._stages(self._down_stages, usage, chunk)
        pending: deque[tuple[Any, int, int]] = deque()

        def finish() -> None:
            stage, start, size = pending.popleft()
            span = round_up(size, 4)
            stage.map_sync(wgpu.MapMode.READ, 0, span)
            view = stage.read_mapped(0, span, copy=False)
            drain(view, start, size)
            del view  # the memory goes away at unmap
            stage.unmap()

        for k, start in enumerate(range(0, nbytes, chunk)):
            if len(pending) == 2:
                finish()
            size = min(chunk, nbytes - start)
            stage = stages[k % 2]
            encoder = self.device.create_command_encoder()
            source(encoder, stage, start, size)
            self.device.queue.submit([encoder.finish()])
            pending.append((stage, start, size))
        while pending:
            finish()

    def _half_pass(self, encoder: Any, convert: Any, read: tuple[Any, int, int], write: tuple[Any, int, int],
                   count: int, planes: int) -> None:
        """half.wgsl over one transfer chunk of `count` values in `planes` runs: from `read` into `write`
        (halves into float32 to widen, float32 into halves to pack)."""
        params = self._uniform(np.array([count, planes, 0, 0], np.uint32))
        cpass = encoder.begin_compute_pass()
        self._dispatch(cpass, convert, {0: read, 1: write, 2: params}, round_up(count, 2) // 2)
        cpass.end()

    def _planar_chunk(self, planes: int) -> int:
        """Bytes of halves per transfer chunk when they travel as `planes` runs: whole pixels, and a multiple
        of 128 so that each chunk's float32 window starts on the device's binding alignment."""
        step = math.lcm(2 * planes, ALIGN // 2)
        return max(step, self._half_chunk // step * step)

    def _stages(self, pool: list[Any], usage: int, chunk: int) -> list[Any]:
        if not pool or pool[0].size < chunk:
            pool[:] = [self._buffer(chunk, usage, "staging") for _ in range(2)]
        return pool



@functools.lru_cache(maxsize=1)
def _copy_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max(COPY_THREADS, 1), thread_name_prefix="oxi-copy")


def _shuffle(flat: np.ndarray, planes: Sequence[np.ndarray], first: int, to_planes: bool) -> None:
    """Between `flat`, values first.. of the interleaved image (value v is channel v % C of pixel v // C), and
    the C flat `planes`: into the planes when `to_planes`, else out of them. Large spans run in pieces on the copy
    pool (numpy releases the GIL): one thread's strided copies would cap the transfer rate."""

    def piece(span: tuple[int, int]) -> None:
        a, b = span
        if to_planes:
            _exchange(flat[a:b], planes, first + a, to_planes=True)
            return
        # Mapped upload memory is write-combined: strided stores into it crawl (a 4K half frame took 45 ms
        # when halves went this way).
        # Interleave in a cached block, then store it whole.
        bounce = _bounce(flat.dtype)
        for s in range(a, b, bounce.size):
            block = bounce[: min(b, s + bounce.size) - s]
            _exchange(block, planes, first + s, to_planes=False)
            flat[s : s + block.size] = block

    _in_pieces(piece, [(a, min(flat.size, a + COPY_PIECE)) for a in range(0, flat.size, COPY_PIECE)])


def _runs(flat: np.ndarray, planes: Sequence[np.ndarray], first: int, to_planes: bool) -> None:
    """Between `flat`, one run of n values per plane (n = flat.size / C), and pixels first..first + n of the C
    flat `planes`: into the planes when `to_planes`, else out of them. Contiguous copies, in pieces on the copy
    pool for large runs."""
    n = flat.size // len(planes)

    def piece(task: tuple[int, int, int]) -> None:
        k, a, b = task
        if to_planes:
            planes[k][first + a : first + b] = flat[k * n + a : k * n + b]
        else:
            flat[k * n + a : k * n + b] = planes[k][first + a : first + b]

    _in_pieces(piece, [(k, a, min(n, a + COPY_PIECE)) for k in range(len(planes)) for a in range(0, n, COPY_PIECE)])


def _in_pieces(piece: Callable[[Any], None], tasks: Sequence[Any]) -> None:
    """`piece` for each task: here for one, else on the copy pool (numpy releases the GIL while copying)."""
    if len(tasks) == 1:
        piece(tasks[0])
    else:
        list(_copy_pool().map(piece, tasks))


def _exchange(flat: np.ndarray, planes: Sequence[np.ndarray], first: int, to_planes: bool) -> None:
    """_shuffle's strided copies for one span, in this thread."""
    count = len(planes)
    for k, plane in enumerate(planes):
        j = (k - first) % count  # the first index of `flat` that holds channel k
        if j < flat.size:
            p = (first + j) // count
            values = slice(p, p + len(range(j, flat.size, count)))
            if to_planes:
                plane[values] = flat[j::count]
            else:
                flat[j::count] = plane[values]


_BOUNCE = threading.local()


def _bounce(dtype: np.dtype) -> np.ndarray:
    """This thread's cache-sized block (256 KiB), as `dtype` values."""
    if not hasattr(_BOUNCE, "block"):
        _BOUNCE.block = np.empty(256 << 10, np.uint8)
    return _BOUNCE.block.view(dtype)
