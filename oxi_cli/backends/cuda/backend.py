"""CudaBackend: the Backend protocol on numba-cuda device arrays; planes stay planar on the device, as on the host,
so a colour op is its CPU loop on one pixel a thread (kernels.py) and transfers are plain copies."""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import cuda
from numba.cuda.cudadrv.driver import CudaAPIError
from numba.cuda.cudadrv.error import CudaSupportError

from oxi_cli.backends.base import DeviceLimits, ImageOpTable, adoptable
from oxi_cli.backends.cuda import kernels
from oxi_cli.backends.cuda.devices import list_devices, too_old
from oxi_cli.backends.cuda.transfers import Staging
from oxi_cli.errors import BackendUnavailable, GpuFailure, ProcessingError
from oxi_cli.ops import Blur, ColorOp, ImageOp, Place, Resize
from oxi_cli.ops.program import compile_program

IMAGE_OPS = ImageOpTable("CUDA")
MAX_DIM = 1 << 20
# Resident size of a process with numba-cuda and a context open, before any pixel (the driver maps ~100 MiB more
# than the CPU backend's process): an estimate, not yet measured on an NVIDIA device.
RUNTIME_BYTES = 288 << 20
# Device arrays of collected images kept for the next image of their size: allocating one costs about as long as
# filling it.
POOL_BYTES = 2 << 30


@dataclass(eq=False)
class CudaImage:
    """A float32 image on the device: one flat plane a channel, `data` (C, H * W)."""

    data: Any
    shape: tuple[int, int, int]
    # Host planes the caller gave away with the upload (`adopt`): the download of this image lands in them.
    spare: list[np.ndarray] | None = field(default=None, repr=False)

    def plane(self, c: int) -> Any:
        """Channel c as (H, W), as the image-op kernels index it."""
        h, w, _ = self.shape
        return self.data[c].reshape(h, w)


class _Pool:
    """Device arrays of collected images by shape, at most `limit` bytes, oldest dropped first."""

    def __init__(self, limit: int) -> None:
        self.limit, self._bytes = limit, 0
        self._free: OrderedDict[int, tuple[tuple[int, int], Any]] = OrderedDict()
        self._lock = threading.Lock()  # arrays come back from the garbage collector, on any thread

    def take(self, shape: tuple[int, int]) -> Any | None:
        with self._lock:
            for key, (kept, array) in self._free.items():
                if kept == shape:
                    del self._free[key]
                    self._bytes -= array.nbytes
                    return array
        return None

    def give(self, shape: tuple[int, int], array: Any) -> None:
        with self._lock:
            if array.nbytes > self.limit:
                return
            self._free[id(array)] = (shape, array)
            self._bytes += array.nbytes
            while self._bytes > self.limit:
                self._bytes -= self._free.popitem(last=False)[1][1].nbytes


@dataclass
class _Device:
    """One opened CUDA device, shared by every backend of the process and kept between a worker's jobs: its
    context, stream, pinned staging buffers and pool of image arrays."""

    index: int
    name: str
    memory: int | None
    gpu: Any
    stream: Any
    staging: Staging
    pool: _Pool
    lock: threading.RLock = field(default_factory=threading.RLock)


_DEVICES: dict[int, _Device] = {}
_OPENING = threading.Lock()


def opened() -> dict[int, str]:
    """Devices this process has open, by index, with their names."""
    return {i: _DEVICES[i].name for i in sorted(_DEVICES)}


def _open_device(index: int) -> _Device:
    with _OPENING:
        found = _DEVICES.get(index)
        if found is not None:
            return found
        if (why := too_old()) is not None:
            raise BackendUnavailable(why)
        try:
            devices = {d["index"]: d for d in list_devices()}
        except Exception as exc:
            raise BackendUnavailable(f"numba-cuda found no CUDA device ({_one_line(exc)}); see `oxi probe`") from None
        if index not in devices:
            raise BackendUnavailable(f"--device {index} does not exist: CUDA lists devices "
                                     f"{', '.join(map(str, devices)) or 'none'}; see `oxi probe`")
        gpu = cuda.gpus[index]
        try:
            with gpu:
                stream = cuda.stream()
                staging = Staging(stream)
        except Exception as exc:  # the driver's errors: out of memory, a device in exclusive use...
            raise BackendUnavailable(f"CUDA device {index} could not be opened: {_one_line(exc)}; "
                                     "use --backend gpu or cpu") from exc
        info = devices[index]
        memory = info["memory"]
        pool = _Pool(min(POOL_BYTES, memory // 4) if memory else POOL_BYTES)
        device = _DEVICES[index] = _Device(index, info["name"], memory, gpu, stream, staging, pool)
        return device


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__


def _on_device(method: Callable) -> Callable:
    """Run a method with the device's context current on this thread (jobs call from several threads), one call
    at a time; the driver's failures become one-line GpuFailures (exit 1, `auto` may redo the job on the CPU)."""

    @functools.wraps(method)
    def wrapper(self: CudaBackend, *args: Any, **kwargs: Any) -> Any:
        try:
            with self._device.lock, self._device.gpu:
                return method(self, *args, **kwargs)
        except (CudaSupportError, CudaAPIError, MemoryError) as exc:
            raise GpuFailure(f"CUDA device {self._device.name} failed in {method.__name__}: {_one_line(exc)}; "
                             "retry with --backend cpu") from exc

    return wrapper


class CudaBackend:
    """Handles are CudaImages; colour ops run in place on `dst` after a device copy when src != dst."""

    name = "cuda"
    image_ops = IMAGE_OPS
    # Numba's CUDA simulator stands in for a device (NUMBA_ENABLE_CUDASIM=1): the code paths run, slowly.
    simulated = kernels.SIMULATED

    def __init__(self, device: int = 0) -> None:
        self._device = _open_device(device)
        self._tables: OrderedDict[tuple, Any] = OrderedDict()

    @property
    def device_label(self) -> str:
        return f"{self._device.name} (CUDA)"

    def limits(self) -> DeviceLimits:
        total = self._device.memory or (16 << 30)
        return DeviceLimits(max_buffer_bytes=total, max_binding_bytes=total, max_dim=MAX_DIM, total_memory=total,
                            usable_memory=int(total * 0.6), detected=self._device.memory is not None,
                            shares_host_memory=False, host_overhead=self._device.staging.host_bytes,
                            runtime_bytes=RUNTIME_BYTES)

    @_on_device
    def allocate(self, height: int, width: int, channels: int, half: bool = False) -> CudaImage:
        """float32 on the device whatever `half` says (half leaves as half through download_planes)."""
        shape = (int(channels), int(height) * int(width))
        pool = self._device.pool
        data = pool.take(shape)
        if data is None:
            data = cuda.device_array(shape, np.float32, stream=self._device.stream)
        image = CudaImage(data, (int(height), int(width), int(channels)))
        weakref.finalize(image, pool.give, shape, data).atexit = False
        return image

    @_on_device
    def upload(self, pixels: np.ndarray | Sequence[np.ndarray], adopt: bool = False, half: bool = False) -> CudaImage:
        """An (H, W, C) array or C (H, W) planes; float16 travels as half and is widened on the device. With
        `adopt`, planes that can hold the results receive this image's download_planes()."""
        if isinstance(pixels, np.ndarray):
            if pixels.ndim != 3:
                raise ProcessingError(f"expected an (H, W, C) image, got shape {pixels.shape}")
            pixels = [pixels[..., c] for c in range(pixels.shape[2])]
        image = self.allocate(*pixels[0].shape, len(pixels))
        dtype = np.dtype(np.float16 if all(p.dtype == np.float16 for p in pixels) else np.float32)
        if adopt and all(adoptable(p, dtype) for p in pixels):
            image.spare = list(pixels)
        sources = [np.ascontiguousarray(p, dtype=dtype).reshape(-1) for p in pixels]
        self._device.staging.up(sources, [image.data[c] for c in range(len(sources))])
        return image

    @_on_device
    def download_planes(self, handle: CudaImage, dtype: type = np.float32) -> list[np.ndarray]:
        """One C-contiguous (H, W) array per channel, float32 or float16 (narrowed on the device)."""
        h, w, c = handle.shape
        spare, handle.spare = handle.spare, None
        if spare is None or len(spare) != c or any(p.dtype != dtype or p.shape != (h, w) for p in spare):
            spare = [np.empty((h, w), dtype) for _ in range(c)]
        self._device.staging.down([handle.data[k] for k in range(c)], [p.reshape(-1) for p in spare])
        return spare

    def download(self, handle: CudaImage, out: np.ndarray | None = None) -> np.ndarray:
        """(H, W, C), float32 unless `out` (float32 or float16) says otherwise."""
        dtype = np.float32 if out is None else out.dtype.type
        planes = self.download_planes(handle, dtype)
        out = np.empty(handle.shape, dtype) if out is None else out
        if out.shape != handle.shape:
            raise ProcessingError(f"download target is {out.shape}, the image is {handle.shape}")
        for c, plane in enumerate(planes):
            out[..., c] = plane
        return out

    @_on_device
    def finish(self) -> None:
        self._device.stream.synchronize()

    # --- colour ops ---------------------------------------------------------------------------------------------

    @_on_device
    def color_chain(self, src: CudaImage, dst: CudaImage, ops: Sequence[ColorOp], has_alpha: bool) -> None:
        """Each op of the chain a kernel over the planes, in place in `dst`."""
        h, w, c = src.shape
        if c < 3:
            raise ProcessingError(f"colour ops need R, G, B channels; the image has {c} channel(s)")
        if has_alpha and c < 4:
            raise ProcessingError(f"a colour chain with alpha needs 4 channels, the image has {c}")
        if dst.shape != src.shape:
            raise ProcessingError(f"colour op source {src.shape} and destination {dst.shape} differ")
        program, params, tables = self._table(("chain", tuple(ops), bool(has_alpha)),
                                              lambda: self._program(ops, has_alpha))
        stream = self._device.stream
        reads_source = any(int(code) in kernels.reads_source() for code in program.key)
        source = src
        if reads_source and dst is src:  # the source must stay as it entered while the chain works in place
            source = self.allocate(h, w, c)
            source.data.copy_to_device(src.data, stream=stream)
        if dst is not src:
            dst.data.copy_to_device(src.data, stream=stream)
        alpha = 3 if program.uses_alpha else 0  # unused without alpha: any plane will do
        planes = [dst.data[k] for k in (0, 1, 2, alpha)]
        origin = [source.data[k] for k in (0, 1, 2, alpha)]
        blocks = kernels.grid(h * w)
        for code, offset, table_offset, size in program.ops:
            kernel = kernels.color_op(int(code))
            kernel[blocks, kernels.THREADS, stream](*planes, *origin, params[int(offset):],
                                                    tables[int(table_offset):], int(size))

    def _program(self, ops: Sequence[ColorOp], has_alpha: bool) -> tuple[Any, Any, Any]:
        program = compile_program(ops, has_alpha)
        stream = self._device.stream
        return program, cuda.to_device(program.params, stream=stream), cuda.to_device(program.tables, stream=stream)

    def _table(self, key: tuple, make: Callable[[], Any]) -> Any:
        """Device copies of programs, LUTs and weights for the last few ops, so bands and tiles reuse them; ops
        with array fields compare by identity, and the key keeps them alive."""
        found = self._tables.get(key)
        if found is None:
            found = self._tables[key] = make()
            while len(self._tables) > 8:
                self._tables.popitem(last=False)
        self._tables.move_to_end(key)
        return found

    # --- image ops ------------------------------------------------------------------------------------------------

    @_on_device
    def spatial(self, src: CudaImage, dst: CudaImage, op: ImageOp) -> None:
        """Run one image op through the kernel registered for its name."""
        if dst is src:
            raise ProcessingError(f"{op.name} cannot run in place")
        IMAGE_OPS.method(op)(self, src, dst, op)

    @IMAGE_OPS.register("blur")
    def blur(self, src: CudaImage, dst: CudaImage, op: Blur) -> None:
        h, w, c = src.shape
        weights = self._table(("blur", op), lambda: cuda.to_device(op.weights().astype(np.float32),
                                                                    stream=self._device.stream))
        middle = self.allocate(h, w, 1)
        blocks, threads = kernels.grid2(h, w)
        stream = self._device.stream
        for k in range(c):
            kernels.blur_axis[blocks, threads, stream](src.plane(k), middle.plane(0), weights, True)
            kernels.blur_axis[blocks, threads, stream](middle.plane(0), dst.plane(k), weights, False)

    @IMAGE_OPS.register("resize")
    def resize(self, src: CudaImage, dst: CudaImage, op: Resize) -> None:
        h, w, c = src.shape
        ho, wo, _ = dst.shape
        stream = self._device.stream

        def axis(a: int, size: int, out: int) -> tuple[Any, Any, Any]:
            taps = op.weights(a, size, out)
            return tuple(cuda.to_device(np.ascontiguousarray(x), stream=stream)  # type: ignore[return-value]
                         for x in (taps.index, taps.weight, taps.count))

        rows = self._table(("resize rows", op, h, ho), lambda: axis(0, h, ho))
        columns = self._table(("resize columns", op, w, wo), lambda: axis(1, w, wo))
        middle = self.allocate(ho, w, 1)
        for k in range(c):
            kernels.resize_rows[(*kernels.grid2(ho, w), stream)](src.plane(k), middle.plane(0), *rows)
            kernels.resize_columns[(*kernels.grid2(ho, wo), stream)](middle.plane(0), dst.plane(k), *columns)

    @IMAGE_OPS.register("place")
    def place(self, src: CudaImage, dst: CudaImage, op: Place) -> None:
        ho, wo, c = dst.shape
        blocks, threads = kernels.grid2(ho, wo)
        for k in range(c):
            kernels.place[blocks, threads, self._device.stream](src.plane(k), dst.plane(k), op.x, op.y)


def open_cuda(device: int | None, threads: int | None = None) -> CudaBackend:
    """The registry's opener (backends/registry.py): device `device`, else the first; `threads` is the CPU's."""
    return CudaBackend(0 if device is None else device)
