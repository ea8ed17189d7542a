"""WgpuBackend: the Backend protocol on wgpu storage buffers, every op a WGSL compute dispatch."""

from __future__ import annotations

import functools
import math
import os
import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import wgpu

from oxi_cli.backends.base import DeviceLimits, adoptable
from oxi_cli.backends.gpu.device import AdapterInfo, describe, raw_adapters
from oxi_cli.backends.gpu.shaders import PipelineCache
from oxi_cli.errors import BackendUnavailable, GpuFailure, ProcessingError
from oxi_cli.ops import Blur, ColorOp, ImageOp, Place, Resize
from oxi_cli.ops.codes import wgsl_entry
from oxi_cli.ops.program import compile_program

# Offsets of bound windows are multiples of this: the largest min-storage-buffer-offset-alignment
# WebGPU allows, so it is valid on every adapter.
ALIGN = 256
WORKGROUP = 256
MAX_GROUPS = 65535
MAX_DIM = 1 << 20
# Staging buffers (two each way, used in turn) bound the extra host memory of a transfer: all four are host
# memory in the RSS once touched. Measured on an H200 (8192x4320 RGBA float32, 8 copy threads): 64 MiB chunks
# upload at 23 GB/s and download at 17, 256 MiB at 27 and 20. At 128 MiB an 8K GPU job's peak RSS was 400-670 MB
# above the CPU path's (issue 9 wants 200 at most) for transfers of ~15 ms; 32 MiB gave back 190 MB (H100 box).
STAGING_BYTES = 32 << 20
TABLE_SLABS = 4
# Resident size of a process with wgpu's library and a device open, before any pixel (2-core box).
RUNTIME_BYTES = 224 << 20
POOL_BYTES = 2 << 30  # at most, and a quarter of the device's memory  # lut3d.wgsl binds a table as up to four windows
# Host copies to and from mapped staging memory run in pieces on several threads (numpy releases the GIL):
# one core's memcpy (~10 GB/s) would otherwise cap the transfer rate.
COPY_PIECE = 1 << 20  # values: a staging chunk is copied in 8 to 32 pieces
COPY_THREADS = min(8, os.cpu_count() or 1)
_ELEMENT = {True: 16, False: 4}  # bytes of one shader element: vec4<f32> or f32
_STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST


def _round_up(n: int, m: int) -> int:
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


def opened_adapters() -> list[int]:
    """Adapters this process has a device open on (a long-lived process keeps them between jobs)."""
    return sorted(_CONTEXTS)


def opened_names() -> list[str]:
    """The names of the adapters this process has a device open on."""
    return [_CONTEXTS[i].info.name for i in sorted(_CONTEXTS)]


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


def _gpu_errors(method: Callable) -> Callable:
    """Device loss, out-of-memory and driver failures become one-line GpuFailures (exit 1)."""

    @functools.wraps(method)
    def wrapper(self: WgpuBackend, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except wgpu.GPUError as exc:
            raise GpuFailure(
                f"GPU {self.adapter.name} failed in {method.__name__}: {_one_line(exc)}; "
                "retry with --backend cpu"
            ) from exc

    return wrapper


class WgpuBackend:
    """Handles are GpuImage device buffers; colour ops run in place on `dst` after a copy when src != dst.

    `window_bytes` caps how much of a buffer one dispatch binds (default: the device's storage binding
    limit, 128 MiB on lavapipe); tests lower it to run the windowed paths on small images.
    `table_window_bytes` does the same for 3D LUT tables, `staging_bytes` for transfer chunks.
    """

    name = "gpu"

    def __init__(
        self,
        adapter: int | None = None,
        *,
        window_bytes: int | None = None,
        table_window_bytes: int | None = None,
        staging_bytes: int = STAGING_BYTES,
    ) -> None:
        if adapter is None:
            from oxi_cli.backends.gpu.device import best, list_adapters

            chosen = best(list_adapters(), gpu_only=False)
            if chosen is None:
                raise BackendUnavailable("no GPU adapter found; run `oxi probe` to see what is missing")
            adapter = chosen.index
        self._ctx = open_adapter(adapter)
        self.adapter: AdapterInfo = self._ctx.info
        self.device = self._ctx.device
        self.pipelines = self._ctx.pipelines
        dev_limits = self.device.limits
        binding = int(dev_limits["max-storage-buffer-binding-size"])
        self._window = min(binding, window_bytes or binding) // ALIGN * ALIGN
        self._table_window = min(binding, table_window_bytes or binding) // ALIGN * ALIGN
        self._max_buffer = int(dev_limits["max-buffer-size"])
        self._chunk = max(ALIGN, min(staging_bytes, self._window) // ALIGN * ALIGN)
        # A chunk of halves widens to twice its bytes, which one binding window must hold.
        self._half_chunk = max(ALIGN, min(staging_bytes, self._window // 2) // ALIGN * ALIGN)
        self._up_stages: list[Any] = []
        self._down_stages: list[Any] = []
        self._scratch: dict[str, Any] = {}
        self._tables: OrderedDict[tuple, tuple[Any, Any]] = OrderedDict()

    # --- protocol: limits, memory, transfers -----------------------------------------------------------

    def limits(self) -> DeviceLimits:
        total = self.adapter.memory or self._max_buffer
        return DeviceLimits(
            max_buffer_bytes=self._max_buffer,
            max_binding_bytes=self._window,
            max_dim=MAX_DIM,
            total_memory=total,
            usable_memory=int(total * 0.6),
            detected=self.adapter.memory is not None,
            shares_host_memory=self.adapter.kind in ("software", "integrated"),
            # Two upload and two download staging buffers: host-visible memory, in the RSS once touched.
            host_overhead=4 * self._chunk,
            runtime_bytes=RUNTIME_BYTES,
        )

    @_gpu_errors
    def allocate(self, height: int, width: int, channels: int, half: bool = False) -> GpuImage:
        """float32 on the device whatever `half` says (half leaves as half through download's packing)."""
        shape = (int(height), int(width), int(channels))
        nbytes = math.prod(shape) * 4
        if nbytes > self._max_buffer:
            raise GpuFailure(
                f"a {width}x{height}x{channels} float image ({nbytes / 2**30:.2f} GiB) exceeds the largest "
                f"buffer of {self.adapter.name} ({self._max_buffer / 2**30:.2f} GiB); use --backend cpu"
            )
        pool = self._ctx.pool
        size = _round_up(max(nbytes, 16), 16)
        buffer = pool.take(size) or self._buffer(size, _STORAGE, "image")
        img = GpuImage(buffer, shape)
        img._recycle = weakref.finalize(img, pool.give, buffer)
        img._recycle.atexit = False
        return img

    @_gpu_errors
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
                encoder.copy_buffer_to_buffer(stage, 0, raw, 0, _round_up(size, 4))
                self._half_pass(encoder, convert, (raw, 0, _round_up(size, 4)), (img.buffer, start * 2, size * 2),
                                size // 2, planes)

            self._stream_up(nbytes, chunk, fill_runs, sink)
        else:

            def fill(view: memoryview, start: int, size: int) -> None:
                _shuffle(np.frombuffer(view, dtype, count=size // 4), sources, start // 4, to_planes=False)

            def sink(encoder: Any, stage: Any, start: int, size: int) -> None:
                encoder.copy_buffer_to_buffer(stage, 0, img.buffer, start, _round_up(size, 4))

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

    @_gpu_errors
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
                self._half_pass(encoder, convert, (handle.buffer, start * 2, size * 2), (raw, 0, _round_up(size, 4)),
                                size // 2, planes)
                encoder.copy_buffer_to_buffer(raw, 0, stage, 0, _round_up(size, 4))

            self._stream_down(nbytes, chunk, drain_runs, source)
        else:

            def drain(view: memoryview, start: int, size: int) -> None:
                _shuffle(np.frombuffer(view, dtype, count=size // 4), targets, start // 4, to_planes=True)

            def source(encoder: Any, stage: Any, start: int, size: int) -> None:
                encoder.copy_buffer_to_buffer(handle.buffer, start, stage, 0, _round_up(size, 4))

            self._stream_down(nbytes, self._chunk, drain, source)

    @_gpu_errors
    def finish(self) -> None:
        """Wait until every submitted command has run (reading a buffer waits for the queue; wgpu-py 0.32's
        on_submitted_work_done_sync is broken). For timing; the protocol's download waits by itself.
        """
        self.device.queue.read_buffer(self._scratch_buffer("finish", 16), 0, 16)

    # --- protocol: colour ops --------------------------------------------------------------------------

    @_gpu_errors
    def color_chain(self, src: GpuImage, dst: GpuImage, ops: Sequence[ColorOp], has_alpha: bool) -> None:
        """Consecutive colour ops in one dispatch per window: each pixel read and written once."""
        if has_alpha and src.shape[2] < 4:
            raise ProcessingError(f"a colour chain with alpha needs 4 channels, the image has {src.shape[2]}")
        key = ("chain", tuple(ops), bool(has_alpha))  # ops with tables hash by identity; the key keeps them
        program, bindings, slab = self._table(key, lambda: self._program(ops, has_alpha))
        n_ops = int(program.ops.shape[0])
        uniform = self._uniform(np.array([n_ops, slab, 0, 0], np.uint32))
        chain = "\n".join(f"    x = {wgsl_entry(code)}(x, ops[{j}]);" for j, code in enumerate(program.key))
        spec = {"ALPHA": program.uses_alpha, "CHAIN": chain}
        self._color(src, dst, "color.wgsl", spec, uniform, bindings)

    def _program(self, ops: Sequence[ColorOp], has_alpha: bool) -> tuple[Any, dict, int]:
        """The chain compiled by ops.program (as the CPU runs it) and its device buffers.

        Tables are bound as up to four windows of `slab` floats, a multiple of 3 * 64: an RGB entry never
        straddles two windows and every window starts 256-byte aligned.
        """
        program = compile_program(ops, has_alpha)
        floats = int(program.tables.size)
        slab = self._table_window // 4 // 192 * 192
        if floats > slab * TABLE_SLABS:
            raise GpuFailure(
                f"the chain's LUT tables ({floats * 4 / 2**20:.0f} MiB) need more than {TABLE_SLABS} bindings of "
                f"{self._table_window >> 20} MiB on {self.adapter.name}; use --backend cpu"
            )
        slab = min(slab, _round_up(floats, 3))
        tables = self._data_buffer(program.tables, "colour tables")
        bindings = {
            2: _whole(self._data_buffer(program.ops.astype(np.uint32), "colour ops")),
            3: _whole(self._data_buffer(program.params, "colour params")),
        }
        for k in range(TABLE_SLABS):
            first = min(k, (floats - 1) // slab) * slab  # unused bindings repeat the last window
            bindings[4 + k] = (tables, first * 4, min(slab, floats - first) * 4)
        return program, bindings, slab

    # --- protocol: spatial ops ---------------------------------------------------------------------------

    def spatial(self, src: GpuImage, dst: GpuImage, op: ImageOp) -> None:
        """Run one image op: the method of this backend named after it (resize, blur, place)."""
        getattr(self, op.name)(src, dst, op)

    @_gpu_errors
    def resize(self, src: GpuImage, dst: GpuImage, op: Resize) -> None:
        (sh, sw, c), (dh, dw, dc) = src.shape, dst.shape
        if dc != c:
            raise ProcessingError(f"resize keeps the channel count: source has {c}, destination {dc}")
        ys = self._axis(op, 0, sh, dh)
        xs = self._axis(op, 1, sw, dw)

        def taps(axis: tuple) -> Callable[[int, int, int, int], tuple[int, int]]:
            index, count, *_ = axis

            def bounds(o0: int, o1: int, t0: int, t1: int) -> tuple[int, int]:
                n = np.minimum(count[o0:o1], t1)
                live = n > t0
                if not live.any():
                    return 0, 0
                lo = index[o0:o1, t0][live].min()
                hi = index[np.arange(o0, o1)[live], n[live] - 1].max() + 1
                return int(lo), int(hi)

            return bounds

        index, count = ys[0], ys[1]
        single = int((index[np.arange(dh), count - 1] - index[:, 0]).max()) + 1
        self._separable(
            src, dst, "resize.wgsl",
            vertical=(ys[2], ys[2], single, taps(ys), ys[3]),
            horizontal=(xs[2], xs[2], xs[3]),
        )

    @_gpu_errors
    def blur(self, src: GpuImage, dst: GpuImage, op: Blur) -> None:
        if dst.shape != src.shape:
            raise ProcessingError(f"blur keeps the image size: source {src.shape}, destination {dst.shape}")
        radius = op.radius
        weights = self._table(("blur", op.sigma), lambda: (self._data_buffer(
            op.weights().astype(np.float32), "blur weights"), None))[0]
        h = src.shape[0]

        def bounds(o0: int, o1: int, t0: int, t1: int) -> tuple[int, int]:
            lo = min(max(o0 - radius + t0, 0), h - 1)
            hi = min(max(o1 - 1 - radius + t1 - 1, 0), h - 1) + 1
            return lo, hi

        bind = {3: (weights, 0, weights.size)}
        self._separable(
            src, dst, "blur.wgsl",
            vertical=(radius, 2 * radius + 1, min(2 * radius + 1, h), bounds, bind),
            horizontal=(radius, 2 * radius + 1, bind),
        )

    @_gpu_errors
    def place(self, src: GpuImage, dst: GpuImage, op: Place) -> None:
        """Bands of output rows, each with the source rows it copies bound beside it (place.wgsl)."""
        (sh, sw, c), (dh, dw, dc) = src.shape, dst.shape
        if dc != c or dst is src:
            raise ProcessingError(f"place needs a destination apart from its source with {c} channels")
        vec4 = c == 4
        px, elem = (1 if vec4 else c), _ELEMENT[vec4]
        pipeline = self.pipelines.get("place.wgsl", T="vec4<f32>" if vec4 else "f32", PX=px)
        src_row, dst_row = sw * px, dw * px
        rows = self._rows_per_window(max(sw, dw), px, elem, c)
        encoder = self.device.create_command_encoder()
        cpass = encoder.begin_compute_pass()
        for y0 in range(0, dh, rows):
            n = min(rows, dh - y0)
            lo, hi = (min(max(v - op.y, 0), sh) for v in (y0, y0 + n))  # source rows this band copies
            first = min(lo, sh - 1)  # a band inside a bar binds one row it never reads
            src_w = self._window_of(src.buffer, first * src_row * elem, max(hi - lo, 1) * src_row * elem, elem)
            dst_w = self._window_of(dst.buffer, y0 * dst_row * elem, n * dst_row * elem, elem)
            fields = [src_w[3], dst_w[3], sw, hi - lo, dst_row, src_row, op.x, lo + op.y - y0, n * dst_row]
            bindings = {0: src_w[:3], 1: dst_w[:3], 2: self._uniform(np.array(fields, np.int32))}
            self._dispatch(cpass, pipeline, bindings, n * dst_row)
        cpass.end()
        self.device.queue.submit([encoder.finish()])

    # --- dispatch machinery ------------------------------------------------------------------------------

    def _color(
        self,
        src: GpuImage,
        dst: GpuImage,
        shader: str,
        spec: dict[str, Any],
        uniform: tuple[Any, int, int],
        extra: dict[int, tuple[Any, int, int]] | None = None,
    ) -> None:
        h, w, c = src.shape
        if c < 3:
            raise ProcessingError(f"colour ops need R, G, B channels; the image has {c} channel(s)")
        if dst.shape != src.shape:
            raise ProcessingError(f"colour op source {src.shape} and destination {dst.shape} differ")
        vec4 = c == 4
        pipeline = self.pipelines.get(shader, VEC4=vec4, CH=c, **spec)
        encoder = self.device.create_command_encoder()
        if dst is not src:
            encoder.copy_buffer_to_buffer(src.buffer, 0, dst.buffer, 0, _round_up(src.nbytes, 4))
        px_bytes = c * 4
        per_window = self._window // px_bytes // 64 * 64  # 64 pixels keep window offsets 256-aligned
        if per_window == 0:
            raise ProcessingError(f"the binding window ({self._window} bytes) is smaller than 64 pixels")
        cpass = encoder.begin_compute_pass()
        pixels = h * w
        for p0 in range(0, pixels, per_window):
            n = min(per_window, pixels - p0)
            bindings = {0: (dst.buffer, p0 * px_bytes, n * px_bytes), 1: uniform, **(extra or {})}
            self._dispatch(cpass, pipeline, bindings, n)
        cpass.end()
        self.device.queue.submit([encoder.finish()])

    def _separable(
        self,
        src: GpuImage,
        dst: GpuImage,
        shader: str,
        vertical: tuple[int, int, int, Callable[[int, int, int, int], tuple[int, int]], dict],
        horizontal: tuple[int, int, dict],
    ) -> None:
        """Vertical pass src -> scratch (H_out x W_src), then horizontal scratch -> dst (as the CPU does).

        vertical = (aux, taps per output, widest source span of one output, bounds(o0, o1, t0, t1) ->
        source rows [lo, hi) read by outputs o0..o1 through taps t0..t1, bindings);
        horizontal = (aux, taps per output, bindings).
        """
        if dst is src:
            raise ProcessingError(f"{shader.split('.')[0]} needs a destination apart from its source")
        (sh, sw, c), (dh, dw, _) = src.shape, dst.shape
        vec4 = c == 4
        px = 1 if vec4 else c  # shader elements per pixel
        elem = _ELEMENT[vec4]
        spec = {"T": "vec4<f32>" if vec4 else "f32", "PX": px}
        tmp = GpuImage(self._scratch_buffer("separable", dh * sw * c * 4), (dh, sw, c))
        encoder = self.device.create_command_encoder()
        cpass = encoder.begin_compute_pass()

        v_aux, v_taps, single, bounds, v_bind = vertical
        pipeline = self.pipelines.get(shader, VERTICAL=True, **spec)
        row = sw * px
        for o0, o1, t0, t1, lo, hi in self._vertical_plan(dh, v_taps, single, row * elem, bounds):
            src_w = self._window_of(src.buffer, lo * row * elem, (hi - lo) * row * elem, elem)
            dst_w = self._window_of(tmp.buffer, o0 * row * elem, (o1 - o0) * row * elem, elem)
            ps = _pass(src_w[3], dst_w[3], sh, row, row, o0, lo, t0, t1, t0 > 0, (o1 - o0) * row, v_aux)
            bindings = {0: src_w[:3], 1: dst_w[:3], 2: self._uniform(ps), **v_bind}
            self._dispatch(cpass, pipeline, bindings, (o1 - o0) * row)

        h_aux, _, h_bind = horizontal
        pipeline = self.pipelines.get(shader, VERTICAL=False, **spec)
        src_row, dst_row = sw * px, dw * px
        rows = self._rows_per_window(max(sw, dw), px, elem, c)
        for y0 in range(0, dh, rows):
            n = min(rows, dh - y0)
            src_w = self._window_of(tmp.buffer, y0 * src_row * elem, n * src_row * elem, elem)
            dst_w = self._window_of(dst.buffer, y0 * dst_row * elem, n * dst_row * elem, elem)
            ps = _pass(src_w[3], dst_w[3], sw, dst_row, src_row, 0, 0, 0, 0, False, n * dst_row, h_aux)
            bindings = {0: src_w[:3], 1: dst_w[:3], 2: self._uniform(ps), **h_bind}
            self._dispatch(cpass, pipeline, bindings, n * dst_row)
        cpass.end()
        self.device.queue.submit([encoder.finish()])

    def _vertical_plan(
        self, n_out: int, taps: int, single: int, row_bytes: int,
        bounds: Callable[[int, int, int, int], tuple[int, int]],
    ) -> Iterator[tuple[int, int, int, int, int, int]]:
        """Bands of output rows and chunks of taps whose source rows fit one binding window.

        `single` is the widest span of source rows one output row reads. When it does not fit, taps run
        in chunks; all bands of one chunk run before the next chunk, which adds onto what they left.
        """
        fit = (self._window - ALIGN) // row_bytes
        if fit < 2:
            raise ProcessingError(
                f"two image rows ({row_bytes} bytes each) exceed the GPU binding window "
                f"({self._window} bytes); use --backend cpu"
            )
        chunk = taps if single <= fit else fit // 2
        for t0 in range(0, taps, chunk):
            t1 = min(taps, t0 + chunk)
            o0 = 0
            while o0 < n_out:
                # Largest band [o0, o1) whose source span fits (spans only grow with the band).
                good, bad = o0 + 1, min(n_out, o0 + fit) + 1
                while bad - good > 1:
                    mid = (good + bad) // 2
                    lo, hi = bounds(o0, mid, t0, t1)
                    good, bad = (mid, bad) if hi - lo <= fit else (good, mid)
                lo, hi = bounds(o0, good, t0, t1)
                if hi <= lo:  # no live taps in this chunk: the dispatch only carries dst through
                    lo, hi = 0, 1
                yield o0, good, t0, t1, lo, hi
                o0 = good

    def _dispatch(self, cpass: Any, pipeline: Any, bindings: dict[int, tuple[Any, int, int]], threads: int) -> None:
        entries = [
            {"binding": b, "resource": {"buffer": buf, "offset": off, "size": size}}
            for b, (buf, off, size) in bindings.items()
        ]
        group = self.device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)
        groups = max(1, -(-threads // WORKGROUP))
        gx = min(groups, MAX_GROUPS)
        cpass.set_pipeline(pipeline)
        cpass.set_bind_group(0, group)
        cpass.dispatch_workgroups(gx, -(-groups // gx), 1)

    def _rows_per_window(self, width: int, px: int, elem: int, channels: int) -> int:
        """Image rows of `width` pixels one binding window holds (a dispatch binds at most that)."""
        rows = (self._window - ALIGN) // (width * px * elem)
        if rows < 1:
            raise ProcessingError(
                f"one image row ({width} pixels x {channels} channels) exceeds the GPU binding window "
                f"({self._window >> 20} MiB); use --backend cpu"
            )
        return rows

    def _window_of(self, buffer: Any, first: int, nbytes: int, elem: int) -> tuple[Any, int, int, int]:
        """(buffer, aligned offset, size, element index of `first` inside the window)."""
        off = first - first % ALIGN
        size = min(_round_up(first + nbytes - off, 16), buffer.size - off)
        if size > self._window:
            raise AssertionError(f"window of {size} bytes planned over the {self._window} byte limit")
        return buffer, off, size, (first - off) // elem

    # --- buffers ------------------------------------------------------------------------------------------

    def _buffer(self, nbytes: int, usage: int, label: str) -> Any:
        return self.device.create_buffer(label=label, size=_round_up(max(nbytes, 16), 16), usage=usage)

    def _scratch_buffer(self, key: str, nbytes: int) -> Any:
        buf = self._scratch.get(key)
        if buf is None or buf.size < nbytes:
            buf = self._scratch[key] = self._buffer(nbytes, _STORAGE, f"scratch {key}")
        return buf

    def _data_buffer(self, array: np.ndarray, label: str) -> Any:
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        padded = np.zeros(_round_up(max(data.size, 16), 16), np.uint8)
        padded[: data.size] = data
        return self.device.create_buffer_with_data(label=label, data=padded, usage=_STORAGE)

    def _uniform(self, params: bytes | np.ndarray) -> tuple[Any, int, int]:
        data = bytes(params) if isinstance(params, bytes) else np.ascontiguousarray(params).tobytes()
        data += b"\0" * (_round_up(max(len(data), 16), 16) - len(data))
        buf = self.device.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.UNIFORM)
        return buf, 0, len(data)

    def _table(self, key: Any, make: Callable[[], Any]) -> Any:
        """Device copies of LUTs and weights, kept for the last few ops so tiles don't re-upload them.

        Ops with array fields compare by identity: the op itself is kept in the key so its id stays valid.
        """
        k = (key,) if not isinstance(key, tuple) else key
        found = self._tables.get(k)
        if found is None:
            found = self._tables[k] = make()
            while len(self._tables) > 8:
                self._tables.popitem(last=False)
        self._tables.move_to_end(k)
        return found

    def _axis(self, op: Resize, axis: int, src: int, dst: int) -> tuple:
        """(index, count, aux, bindings) for one resize axis, from the same weights the CPU uses."""
        window = op.rows if axis == 0 else op.cols

        def make() -> tuple[Any, Any]:
            ax = op.weights(axis, src, dst)
            bind = {
                3: _whole(self._data_buffer(ax.index.astype(np.int32), "resize index")),
                4: _whole(self._data_buffer(ax.weight, "resize weights")),
                5: _whole(self._data_buffer(ax.count.astype(np.uint32), "resize count")),
            }
            return ax, bind

        ax, bind = self._table(("resize", op.filter, src, dst, window), make)
        return ax.index, ax.count, int(ax.index.shape[1]), bind

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
            view = stage._experimental_get_mapped_range(0, _round_up(size, 4))  # writable; wgpu <0.33 has it
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
            span = _round_up(size, 4)
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
        self._dispatch(cpass, convert, {0: read, 1: write, 2: params}, _round_up(count, 2) // 2)
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


def _whole(buffer: Any) -> tuple[Any, int, int]:
    return buffer, 0, buffer.size


def _pass(
    src_base: int, dst_base: int, src_len: int, row_elems: int, src_row_elems: int, o0: int, lo: int,
    t0: int, t1: int, accumulate: bool, total: int, aux: int,
) -> bytes:
    """The `Pass` uniform of separable.wgsl."""
    fields = [src_base, dst_base, src_len, row_elems, src_row_elems, o0, lo, t0, t1, int(accumulate), total, aux]
    return np.array(fields, dtype=np.uint32).tobytes()
