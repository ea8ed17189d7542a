"""CpuBackend: the Backend protocol on numpy arrays, dispatching to the Numba kernels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from oxi_cli.backends.base import DeviceLimits, host_limits
from oxi_cli.backends.cpu.jit import set_threads
from oxi_cli.backends.cpu.kernels import blur, color, resize
from oxi_cli.errors import ProcessingError
from oxi_cli.ops import Blur, Cdl, ColorOp, Lut1d, Lut3d, Matrix, Op, Resize
from oxi_cli.ops.program import compile_program


def _pixels(a: np.ndarray) -> np.ndarray:
    """(H, W, C) -> (H*W, C) view for per-pixel kernels."""
    return a.reshape(-1, a.shape[2])


def _rows(a: np.ndarray) -> np.ndarray:
    """(H, W, C) -> (H, W*C) view for row kernels."""
    return a.reshape(a.shape[0], -1)


def _carry_untouched(src: np.ndarray, dst: np.ndarray, first: int) -> None:
    """Colour kernels write only their channels; a separate destination gets the rest copied as is."""
    if dst is not src and src.shape[2] > first:
        dst[..., first:] = src[..., first:]


class CpuBackend:
    """Handles are C-contiguous float32 (H, W, C) numpy arrays; `upload` may adopt the caller's array."""

    name = "cpu"

    def __init__(self, threads: int | None = None) -> None:
        self.threads = set_threads(threads)

    def limits(self) -> DeviceLimits:
        return host_limits()

    def prepare(self, ops: Sequence[Op], channels: int, has_alpha: bool) -> None:
        """Load each kernel from Numba's cache (or compile it) by running it on a 2x2 image."""
        tiny = np.ones((2, 2, channels), dtype=np.float32)
        if any(isinstance(op, ColorOp) for op in ops):
            # One interpreter serves every colour op, so a single call loads it.
            self.color_chain(tiny, tiny, [op for op in ops if isinstance(op, ColorOp)], has_alpha)
        for op in ops:
            if not isinstance(op, ColorOp):
                small = replace(op, width=2, height=2) if isinstance(op, Resize) else op
                small.dispatch(self, tiny, self.allocate(2, 2, channels))

    def upload(self, pixels: np.ndarray) -> np.ndarray:
        if pixels.ndim != 3:
            raise ProcessingError(f"expected an (H, W, C) image, got shape {pixels.shape}")
        return np.ascontiguousarray(pixels, dtype=np.float32)

    def allocate(self, height: int, width: int, channels: int) -> np.ndarray:
        return np.empty((height, width, channels), dtype=np.float32)

    def download(self, handle: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            return handle
        with np.errstate(over="ignore"):  # beyond half range becomes +-Inf, as OpenEXR converts
            np.copyto(out, handle)
        return out

    def color_chain(self, src: np.ndarray, dst: np.ndarray, ops: Sequence[ColorOp], has_alpha: bool) -> None:
        program = compile_program(ops, has_alpha)
        _carry_untouched(src, dst, 4 if program.uses_alpha else 3)
        color.color_chain(
            _pixels(src), _pixels(dst), program.ops, program.params, program.tables, program.uses_alpha
        )

    def cdl(self, src: np.ndarray, dst: np.ndarray, op: Cdl) -> None:
        self.color_chain(src, dst, [op], False)

    def matrix(self, src: np.ndarray, dst: np.ndarray, op: Matrix, has_alpha: bool) -> None:
        self.color_chain(src, dst, [op], has_alpha)

    def lut1d(self, src: np.ndarray, dst: np.ndarray, op: Lut1d) -> None:
        self.color_chain(src, dst, [op], False)

    def lut3d(self, src: np.ndarray, dst: np.ndarray, op: Lut3d) -> None:
        self.color_chain(src, dst, [op], False)

    def resize(self, src: np.ndarray, dst: np.ndarray, op: Resize) -> None:
        h, w, c = src.shape
        ys = op.weights(0, h, dst.shape[0])
        xs = op.weights(1, w, dst.shape[1])
        resize.resize(
            _rows(src), _rows(dst), c, ys.index, ys.weight, ys.count, xs.index, xs.weight, xs.count
        )

    def blur(self, src: np.ndarray, dst: np.ndarray, op: Blur) -> None:
        blur.blur(_rows(src), _rows(dst), src.shape[2], op.weights().astype(np.float32))
