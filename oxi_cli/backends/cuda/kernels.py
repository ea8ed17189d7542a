"""The CUDA backend's kernels: each colour op's CPU loop (its kernel module's `LONE`) compiled for the device and
run one pixel a thread, so an op's maths is written once; the image ops and half conversions as device loops."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numba
from numba import cuda

from oxi_cli.backends.cpu.kernels import aces2
from oxi_cli.backends.cpu.kernels import color as cpu_color
from oxi_cli.backends.cpu.kernels.half import convert_block
from oxi_cli.ops.codes import ACES2_OUTPUT

# Threads a block: colour and conversion kernels run one pixel a thread, image ops a 16 x 16 tile of pixels.
THREADS = 256
TILE = 16
# Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1: CI without a GPU) runs kernels as Python, where the CPU's
# compiled loops take NumPy arrays, not the simulator's device arrays.
SIMULATED = bool(numba.config.ENABLE_CUDASIM)


def _on_device(function: Callable[..., None]) -> Any:
    """A CPU-compiled loop as a kernel calls it: CUDA compiles a Numba dispatcher for the device (Numba's typing
    turns a CPU dispatcher called in a kernel into a device function); the simulator calls it with the NumPy
    arrays behind its device arrays."""
    if not SIMULATED:
        return function if isinstance(function, numba.core.dispatcher.Dispatcher) else numba.njit(function)

    def host_call(*args: Any) -> None:
        function(*(getattr(a, "_ary", a) for a in args))

    return host_call


_ACES2_ROWS = aces2.ROWS  # a constant where the kernel is compiled (a module attribute is not)


@cuda.jit(device=True)
def _aces2_pixel(r, g, b, a, ro, go, bo, ao, p, t, n):  # pragma: no cover - runs on the device
    """kernels/aces2.py's stages on one pixel's scratch (its CPU loop takes a block of 256 in heap scratch)."""
    s = cuda.local.array((_ACES2_ROWS, 1), numba.float32)
    s[aces2.S_R, 0], s[aces2.S_G, 0], s[aces2.S_B, 0] = r[0], g[0], b[0]
    aces2._to_cam(s, p, 0)
    aces2._hue_rows(s, p, 0, t, 0)
    aces2._to_rgb(s, p, 0)
    ro[0], go[0], bo[0] = s[aces2.S_R, 0], s[aces2.S_G, 0], s[aces2.S_B, 0]


# Codes whose CPU loop keeps scratch on the heap, which a device function cannot: the stages again, on a
# thread's own scratch. The simulator runs the CPU loop itself.
_DEVICE_LOOPS = {} if SIMULATED else {ACES2_OUTPUT: _aces2_pixel}


def reads_source() -> frozenset[int]:
    """The op codes whose loops also read the program's source pixels (kernels/premult.py's REPREMULT)."""
    cpu_color.all_loops()
    return frozenset(cpu_color._READS_SOURCE)


def _cpu_loop(code: int) -> Callable[..., None]:
    return cpu_color._LOOPS[code] if code in cpu_color._LOOPS else cpu_color.all_loops()[code]


@functools.cache
def color_op(code: int) -> Any:
    """The kernel running op `code` over flat float32 planes in place, one pixel a thread: (r, g, b, a, the
    source's r, g, b, a (read by codes that read the program's source, else any planes), params, table, n)."""
    loop = _DEVICE_LOOPS.get(code) or _on_device(_cpu_loop(code))
    if code in cpu_color._READS_SOURCE:

        @cuda.jit
        def run_with_source(r, g, b, a, rs, gs, bs, as_, p, t, n):  # pragma: no cover - runs on the device
            i = cuda.grid(1)
            if i < r.shape[0]:
                j = i + 1
                loop(r[i:j], g[i:j], b[i:j], a[i:j], r[i:j], g[i:j], b[i:j], a[i:j], p, t, n, rs[i:j], gs[i:j],
                     bs[i:j], as_[i:j])

        return run_with_source

    @cuda.jit
    def run(r, g, b, a, rs, gs, bs, as_, p, t, n):  # pragma: no cover - runs on the device
        i = cuda.grid(1)
        if i < r.shape[0]:
            j = i + 1
            loop(r[i:j], g[i:j], b[i:j], a[i:j], r[i:j], g[i:j], b[i:j], a[i:j], p, t, n)

    return run


_convert = _on_device(convert_block)


@cuda.jit
def convert(src, dst):  # pragma: no cover - runs on the device
    """Flat float32 <-> half bits (uint16) or same to same, as the CPU converts (kernels/half.py)."""
    i = cuda.grid(1)
    if i < src.shape[0]:
        _convert(src[i:i + 1], dst[i:i + 1])


@cuda.jit
def blur_axis(src, dst, weights, vertical):  # pragma: no cover - runs on the device
    """One pass of a separable Gaussian over (H, W) planes, down the columns (`vertical`, the first pass) or along
    the rows, as kernels/blur.py sums its taps; edges replicate."""
    x, y = cuda.grid(2)
    h, w = src.shape
    if y < h and x < w:
        radius = (weights.shape[0] - 1) // 2
        acc = weights[radius] * src[y, x]
        for k in range(1, radius + 1):
            if vertical:
                pair = src[max(y - k, 0), x] + src[min(y + k, h - 1), x]
            else:
                pair = src[y, max(x - k, 0)] + src[y, min(x + k, w - 1)]
            acc += weights[radius + k] * pair
        dst[y, x] = acc


@cuda.jit
def resize_rows(src, dst, index, weight, count):  # pragma: no cover - runs on the device
    """Output rows of a separable resize, every source column (kernels/resize.py's vertical taps)."""
    x, y = cuda.grid(2)
    if y < dst.shape[0] and x < dst.shape[1]:
        acc = numba.float32(0.0)  # no tap (all on black, outside the data window): 0, whatever index[y, 0] holds
        for t in range(count[y]):
            acc += weight[y, t] * src[index[y, t], x]
        dst[y, x] = acc


@cuda.jit
def resize_columns(src, dst, index, weight, count):  # pragma: no cover - runs on the device
    """Output columns from resize_rows' rows (kernels/resize.py's horizontal taps)."""
    x, y = cuda.grid(2)
    if y < dst.shape[0] and x < dst.shape[1]:
        acc = numba.float32(0.0)
        for t in range(count[x]):
            acc += weight[x, t] * src[y, index[x, t]]
        dst[y, x] = acc


@cuda.jit
def place(src, dst, x0, y0):  # pragma: no cover - runs on the device
    """dst[r, c] = src[r - y0, c - x0] where that lies inside src, else 0 (kernels/place.py)."""
    x, y = cuda.grid(2)
    if y < dst.shape[0] and x < dst.shape[1]:
        sy, sx = y - y0, x - x0
        inside = 0 <= sy < src.shape[0] and 0 <= sx < src.shape[1]
        dst[y, x] = src[sy, sx] if inside else 0.0


def grid(pixels: int) -> int:
    """Blocks of THREADS for a one-pixel-a-thread kernel over `pixels`."""
    return max(1, -(-pixels // THREADS))


def grid2(height: int, width: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Blocks and threads of a 2D kernel over (height, width), x along the width."""
    return (max(1, -(-width // TILE)), max(1, -(-height // TILE))), (TILE, TILE)
