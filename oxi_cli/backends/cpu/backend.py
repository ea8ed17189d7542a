"""CpuBackend: the Backend protocol on numpy arrays, dispatching to the Numba kernels."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import import_module
from types import ModuleType

import numpy as np

from oxi_cli.backends.base import DeviceLimits, ImageOpTable, adoptable, host_label, host_limits
from oxi_cli.backends.cpu import cold, numpy_ops
from oxi_cli.backends.cpu.half_floats import bits, half_in_hardware
from oxi_cli.backends.cpu.pool import run_blocks, split, threads_for
from oxi_cli.errors import ProcessingError
from oxi_cli.ops import Blur, ColorOp, ImageOp, Place, Resize
from oxi_cli.ops.program import compile_program


def _kernels(name: str) -> ModuleType:
    """A kernel module, imported on first use rather than with the backend: a job then imports Numba (0.3 s
    on a 16-core host with an H100 GPU) on its warm-up thread, beside the decode, not before the decode starts."""
    return import_module(f"oxi_cli.backends.cpu.kernels.{name}")


# What this backend computes, by image op name: the kernels, and their NumPy stand-ins for a job that finds a
# kernel not compiled yet (tests/backends check both against every image op).
IMAGE_OPS = ImageOpTable("CPU")
STAND_INS = ImageOpTable("CPU (NumPy stand-ins)")


class Planes:
    """The CPU backend's image: one C-contiguous (H, W) array per channel, all float32 or all float16.

    Planar like the files themselves, so a half EXR's channels go to the kernels and back with no
    interleaving, widening or narrowing passes; the kernels convert half in registers (kernels/half.py).
    """

    __slots__ = ("arrays",)

    def __init__(self, arrays: Sequence[np.ndarray]) -> None:
        self.arrays = list(arrays)

    @property
    def shape(self) -> tuple[int, int, int]:
        h, w = self.arrays[0].shape
        return h, w, len(self.arrays)

    def bits(self, channel: int) -> np.ndarray:
        """One plane as the kernels take it: flat, half as its uint16 bits."""
        return bits(self.arrays[channel]).reshape(-1)

    def rows(self, channel: int) -> np.ndarray:
        """One plane as the row kernels take it: (H, W), half as its uint16 bits."""
        return bits(self.arrays[channel])


class CpuBackend:
    """Handles are `Planes`; colour ops keep a half image half, spatial ops write float32.

    Work whose kernels are not compiled yet goes another way (backends/cpu/cold.py): colour ops through
    OpenColorIO's CPU processor (ops/ocio_cpu.py: 5e-5 of max(|value|, 1) from the kernels, NaN and Inf alike),
    image ops and conversions in NumPy (numpy_ops.py), while a background process compiles the kernels for the
    next job; `wait_for_kernels` compiles them now instead (None: as OXI_WAIT_FOR_KERNELS says).
    """

    name = "cpu"
    image_ops = IMAGE_OPS

    def __init__(self, threads: int | None = None, wait_for_kernels: bool | None = None) -> None:
        self._requested = threads
        self._threads: int | None = None
        self.wait_for_kernels = cold.waits() if wait_for_kernels is None else wait_for_kernels

    @property
    def device_label(self) -> str:
        return host_label()

    @property
    def threads(self) -> int:
        """The kernels' thread count: the request clamped to this process's cores."""
        if self._threads is None:
            self._threads = threads_for(self._requested)
        return self._threads

    def limits(self) -> DeviceLimits:
        return host_limits()

    def upload(self, pixels: np.ndarray | Sequence[np.ndarray], adopt: bool = False, half: bool = False) -> Planes:
        """An (H, W, C) array or C (H, W) planes; half planes stay half when `half` allows, else float32.
        Copied (kernels work in place) unless `adopt`: then planes already C-contiguous in the handle's type
        become the handle as they are."""
        if isinstance(pixels, np.ndarray):
            if pixels.ndim != 3:
                raise ProcessingError(f"expected an (H, W, C) image, got shape {pixels.shape}")
            pixels = [pixels[..., c] for c in range(pixels.shape[2])]
        keep = half and half_in_hardware() and all(p.dtype == np.float16 for p in pixels)
        dtype = np.float16 if keep else np.float32
        return Planes([p if adopt and adoptable(p, dtype) else self._converted(p, dtype) for p in pixels])

    def _converted(self, plane: np.ndarray, dtype: type) -> np.ndarray:
        tiny = np.zeros(1, plane.dtype)
        if self._ready(("convert", plane.dtype, dtype), lambda: _kernels("half").converted(tiny, dtype, 1), ["half"],
                       lambda: True):
            return _kernels("half").converted(plane, dtype, self.threads)
        out = np.empty(plane.shape, dtype)
        with np.errstate(over="ignore"):  # NumPy rounds as the kernels do; beyond half range becomes +-Inf
            np.copyto(out, plane)
        return out

    def _ready(self, key: object, trial: Callable[[], None], modules: Sequence[str],
               other_way: Callable[[], bool]) -> bool:
        return cold.ready(key, trial, modules, other_way, self.wait_for_kernels)

    def allocate(self, height: int, width: int, channels: int, half: bool = False) -> Planes:
        dtype = np.float16 if half and half_in_hardware() else np.float32
        return Planes([np.empty((height, width), dtype) for _ in range(channels)])

    def download(self, handle: Planes, out: np.ndarray | None = None) -> np.ndarray:
        """(H, W, C), float32 unless `out` (float32 or float16) says otherwise."""
        if out is None:
            out = np.empty(handle.shape, np.float32)
        if out.shape != handle.shape:
            raise ProcessingError(f"download target is {out.shape}, the image is {handle.shape}")
        with np.errstate(over="ignore"):  # beyond half range becomes +-Inf, as OpenEXR converts
            for c, plane in enumerate(handle.arrays):
                out[..., c] = plane
        return out

    def download_planes(self, handle: Planes, dtype: type = np.float32) -> list[np.ndarray]:
        """The handle's own planes where they already are `dtype`; converted copies otherwise."""
        return [p if p.dtype == dtype else self._converted(p, dtype) for p in handle.arrays]

    def color_chain(self, src: Planes, dst: Planes, ops: Sequence[ColorOp], has_alpha: bool) -> None:
        program = compile_program(ops, has_alpha)
        first = 4 if program.uses_alpha else 3
        if dst is not src:  # colour kernels write only their channels
            for c in range(first, src.shape[2]):
                np.copyto(dst.arrays[c], src.arrays[c])
        alpha = 3 if program.uses_alpha else 0  # unused without alpha: any plane of the right type will do
        src_planes = [src.bits(c) for c in (0, 1, 2, alpha)]
        dst_planes = src_planes if dst is src else [dst.bits(c) for c in (0, 1, 2, alpha)]
        modules = {type(op).__module__.rsplit(".", 1)[-1] for op in ops}
        same = dst is src

        def kernels() -> ModuleType:
            color = _kernels("color")
            color.load_loops(modules)
            return color

        def trial() -> None:  # the same kernels, argument types and path on one pixel
            tiny = [np.zeros(1, p.dtype) for p in src_planes]
            kernels().run_program(program, tiny, tiny if same else [np.zeros(1, p.dtype) for p in dst_planes], 1)

        key = ("color", program.key, program.uses_alpha, src_planes[0].dtype, dst_planes[0].dtype, same)
        from oxi_cli.ops.ocio_cpu import covers, for_ops

        if self._ready(key, trial, [*modules, "half"], lambda: covers(ops) and cold.ocio_available()):
            kernels().run_program(program, src_planes, dst_planes, self.threads)
            return

        if not same:
            with np.errstate(over="ignore"):
                for c in range(first):
                    np.copyto(dst.arrays[c], src.arrays[c])
        for_ops(ops, has_alpha).apply_on_host(dst.arrays[:first], self.threads)

    def finish(self) -> None:
        """Nothing to wait for: every call has run when it returns."""

    def spatial(self, src: Planes, dst: Planes, op: ImageOp) -> None:
        """Run one image op: its kernel (IMAGE_OPS), or its NumPy stand-in (STAND_INS) while the kernel is not
        compiled."""
        kernel = IMAGE_OPS.method(op)
        tiny = op.sample()

        def trial() -> None:
            planes = Planes([np.zeros((2, 2), src.arrays[0].dtype)])
            w, h = tiny.out_size(2, 2)
            kernel(self, planes, Planes([np.zeros((h, w), dst.arrays[0].dtype)]), tiny, 1)

        name = op.kernel_name()
        key = ("spatial", name, src.arrays[0].dtype, dst.arrays[0].dtype)
        if self._ready(key, trial, [name], lambda: name in STAND_INS):
            kernel(self, src, dst, op)
        else:
            STAND_INS.method(op)(self, src, dst, op)

    def _rows(self, dst: Planes, each: Callable[[int, int, int], None], threads: int | None = None) -> None:
        """each(channel, first, last) over every channel's output rows, about four tasks a thread."""
        h, _, c = dst.shape
        threads = threads or self.threads
        rows = min(h, split(h * c, threads, 1))
        tasks = [(i, first, min(first + rows, h)) for i in range(c) for first in range(0, h, rows)]

        def run(start: int, stop: int) -> None:
            for task in tasks[start:stop]:
                each(*task)

        run_blocks(run, len(tasks), 1, threads)

    @IMAGE_OPS.register("resize")
    def resize(self, src: Planes, dst: Planes, op: Resize, threads: int | None = None) -> None:
        h, w, _ = src.shape
        ys = op.weights(0, h, dst.shape[0])
        xs = op.weights(1, w, dst.shape[1])
        yi, yw, yc, xi, xw, xc = (np.ascontiguousarray(a) for a in (ys.index, ys.weight, ys.count, xs.index,
                                                                      xs.weight, xs.count))
        kernel = _kernels("resize").resize
        self._rows(dst, lambda i, first, last: kernel(src.rows(i), dst.rows(i), 1, yi, yw, yc, xi, xw, xc, first,
                                                      last), threads)

    @IMAGE_OPS.register("blur")
    def blur(self, src: Planes, dst: Planes, op: Blur, threads: int | None = None) -> None:
        weights = op.weights().astype(np.float32)
        kernel = _kernels("blur").blur
        self._rows(dst, lambda i, first, last: kernel(src.rows(i), dst.rows(i), 1, weights, first, last), threads)

    @IMAGE_OPS.register("place")
    def place(self, src: Planes, dst: Planes, op: Place, threads: int | None = None) -> None:
        kernel = _kernels("place").place
        self._rows(dst, lambda i, first, last: kernel(src.rows(i), dst.rows(i), op.x, op.y, first, last),
                   threads)

    @STAND_INS.register("resize")
    def _resize_numpy(self, src: Planes, dst: Planes, op: Resize) -> None:
        h, w, _ = src.shape
        ys, xs = op.weights(0, h, dst.shape[0]), op.weights(1, w, dst.shape[1])
        self._rows(dst, lambda i, first, last: numpy_ops.resize_rows(src.arrays[i], dst.arrays[i], ys, xs, first,
                                                                     last))

    @STAND_INS.register("blur")
    def _blur_numpy(self, src: Planes, dst: Planes, op: Blur) -> None:
        weights = op.weights().astype(np.float32)
        self._rows(dst, lambda i, first, last: numpy_ops.blur_rows(src.arrays[i], dst.arrays[i], weights, first,
                                                                   last))

    @STAND_INS.register("place")
    def _place_numpy(self, src: Planes, dst: Planes, op: Place) -> None:
        self._rows(dst, lambda i, first, last: numpy_ops.place_rows(src.arrays[i], dst.arrays[i], op.x, op.y, first,
                                                                    last))


def open_cpu(device: int | None, threads: int | None) -> CpuBackend:
    """The registry's opener (backends/registry.py): the host is the one device, so `device` is always None."""
    return CpuBackend(threads)
