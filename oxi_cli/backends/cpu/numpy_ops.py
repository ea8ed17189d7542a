"""Resize, blur and place in NumPy, a few rows at a time: what the CPU backend runs while their kernels compile.
The same float32 sums in the same order as kernels/resize.py and kernels/blur.py; the kernels may fuse a
multiply-add (fastmath contract), so a value may differ by an ulp of each tap's product (NaN and Inf alike)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

F32 = np.float32
# Output rows computed at a time: a band's float32 temporaries stay in L2 (32 rows of 4K: 512 KiB each).
ROWS = 32


def _bands(first: int, last: int) -> Iterator[tuple[int, int]]:
    for start in range(first, last, ROWS):
        yield start, min(start + ROWS, last)


def _stored(values: np.ndarray, out: np.ndarray) -> None:
    with np.errstate(over="ignore"):  # beyond half range becomes +-Inf, as the kernels store it
        out[...] = values


def _add_product(acc: np.ndarray, w: np.ndarray | np.float32, x: np.ndarray, tmp: np.ndarray) -> None:
    """acc += w * x, rounded as the kernel's float32 sum of a float32 product; no temporaries allocated."""
    np.multiply(x, w, out=tmp)
    np.add(acc, tmp, out=acc)


def resize_rows(src: np.ndarray, dst: np.ndarray, ys: object, xs: object, first: int, last: int) -> None:
    """Output rows [first, last) of one plane (src (H, W), dst (Ho, Wo); float16 or float32), from
    ops.resize.axis_weights' index, weight and count per output row and column."""
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and Inf propagate, as in the kernel
        for start, stop in _bands(first, last):
            _resize_band(src, dst, ys, xs, start, stop)


def _resize_band(src: np.ndarray, dst: np.ndarray, ys: object, xs: object, first: int, last: int) -> None:
    yi, yw, yc = ys.index[first:last], ys.weight[first:last], ys.count[first:last]  # type: ignore[attr-defined]
    lo, hi = int(yi.min()), int(yi.max()) + 1
    block = src[lo:hi].astype(F32)  # the source rows this band reads, widened once
    rows = yw[:, 0, None] * block[yi[:, 0] - lo]
    rows[yc == 0] = 0.0  # every tap on black (outside the data window)
    for t in range(1, int(yc.max())):
        live = yc > t
        rows[live] += yw[live, t, None] * block[yi[live, t] - lo]
    xi, xw, xc = xs.index, xs.weight, xs.count  # type: ignore[attr-defined]
    out = xw[None, :, 0] * rows[:, xi[:, 0]]
    out[:, xc == 0] = 0.0
    for t in range(1, int(xc.max())):
        live = xc > t
        out[:, live] += xw[None, live, t] * rows[:, xi[live, t]]
    _stored(out, dst[first:last])


def blur_rows(src: np.ndarray, dst: np.ndarray, weights: np.ndarray, first: int, last: int) -> None:
    """Rows [first, last) of one plane blurred (2R+1 symmetric float32 taps, edges replicated)."""
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and Inf propagate, as in the kernel
        for start, stop in _bands(first, last):
            _blur_band(src, dst, weights, start, stop)


def _blur_band(src: np.ndarray, dst: np.ndarray, weights: np.ndarray, first: int, last: int) -> None:
    h, width = src.shape
    radius = (weights.shape[0] - 1) // 2
    wc = weights[radius]
    # The band's rows with `radius` more either side, edge rows repeated, widened once.
    block = src[np.clip(np.arange(first - radius, last + radius), 0, h - 1)].astype(F32)
    n = last - first
    acc = wc * block[radius : radius + n]
    pair, tmp = np.empty_like(acc), np.empty_like(acc)
    for k in range(1, radius + 1):
        np.add(block[radius - k : radius - k + n], block[radius + k : radius + k + n], out=pair)
        _add_product(acc, weights[radius + k], pair, tmp)
    padded = np.pad(acc, ((0, 0), (radius, radius)), mode="edge")
    out = wc * padded[:, radius : radius + width]
    for k in range(1, radius + 1):
        np.add(padded[:, radius - k : radius - k + width], padded[:, radius + k : radius + k + width], out=pair)
        _add_product(out, weights[radius + k], pair, tmp)
    _stored(out, dst[first:last])


def place_rows(src: np.ndarray, dst: np.ndarray, x: int, y: int, first: int, last: int) -> None:
    """Rows [first, last) of dst: src moved by (x, y) inside a box of zeros."""
    dst[first:last] = 0
    sh, sw = src.shape
    r0, r1 = max(first, y), min(last, y + sh)
    c0, c1 = max(0, x), min(dst.shape[1], x + sw)
    if r0 < r1 and c0 < c1:
        _stored(src[r0 - y : r1 - y, c0 - x : c1 - x].astype(F32), dst[r0:r1, c0:c1])
