"""Trusted float64 implementations of NOTES.md §1 (resize, blur, CDL, matrix, LUTs) and random HDR images."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

# --- random HDR images --------------------------------------------------------------------------------

# Non-finite values sit on fixed flat-index lattices (coprime strides) so every channel gets each kind,
# some pixels get two kinds, and a test can name the positions without looking at the data.
NONFINITE_LATTICES: tuple[tuple[float, int, int], ...] = (
    (float("nan"), 23, 7),
    (float("inf"), 29, 11),
    (float("-inf"), 31, 13),
)


def nonfinite_mask(shape: Sequence[int]) -> np.ndarray:
    """Where `hdr_image(..., nonfinite=True)` puts NaN/+Inf/-Inf (boolean, same shape)."""
    flat = np.arange(math.prod(shape))
    hit = np.zeros(flat.shape, dtype=bool)
    for _, stride, start in NONFINITE_LATTICES:
        hit |= flat % stride == start
    return hit.reshape(shape)


def hdr_image(shape: Sequence[int], seed: int, nonfinite: bool = False) -> np.ndarray:
    """float32 image of lognormal magnitudes (about 1e-3..1e4), ~15 % negative, never zero.

    With `nonfinite`, NaN, +Inf and -Inf are written at `nonfinite_mask(shape)` (about 10 % of values).
    """
    rng = np.random.default_rng(seed)
    mag = np.exp(rng.normal(0.0, 2.0, size=shape))
    # A few very bright values (specular highlights) so HDR range is exercised whatever the seed.
    bright = rng.random(shape) < 0.01
    mag[bright] = rng.uniform(1e3, 1e4, size=int(bright.sum()))
    sign = np.where(rng.random(shape) < 0.15, -1.0, 1.0)
    img = np.clip(mag, 1e-4, 1e4).astype(np.float32) * sign.astype(np.float32)
    assert np.all(img != 0)
    if nonfinite:
        flat = img.reshape(-1)
        idx = np.arange(flat.size)
        # Later lattices win where they overlap, so each kind keeps some sole positions.
        for value, stride, start in NONFINITE_LATTICES:
            flat[idx % stride == start] = value
    return img


def lut_inputs(
    shape: Sequence[int], lo: Sequence[float], hi: Sequence[float], seed: int, nonfinite: bool = True
) -> np.ndarray:
    """float32 (..., C>=3) inputs for LUT tests: most inside the domain [lo, hi] per channel, some a little
    outside, some far outside (HDR, negative), the domain's exact ends, and the `hdr_image` NaN/±Inf lattice.
    """
    rng = np.random.default_rng(seed)
    lo_, hi_ = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    span = hi_ - lo_
    img = hdr_image(shape, seed, nonfinite=nonfinite)
    rgb = lo_ + span * rng.uniform(-0.1, 1.1, size=(*shape[:-1], 3))
    far = rng.random(shape[:-1]) < 0.15
    rgb[far] = img[..., :3][far]
    flat = rgb.reshape(-1, 3)
    flat[:4] = [lo_, hi_, [lo_[0], hi_[1], lo_[2]], lo_ + span / 2]
    img[..., :3] = np.where(np.isfinite(img[..., :3]), rgb, img[..., :3])
    return img


# --- resize and blur -----------------------------------------------------------------------------------


def _cubic(b: float, c: float) -> Callable[[np.ndarray], np.ndarray]:
    """Mitchell-Netravali family: catmull-rom is B=0, C=1/2; mitchell is B=C=1/3."""

    def f(d: np.ndarray) -> np.ndarray:
        x = np.abs(d)
        near = ((12 - 9 * b - 6 * c) * x**3 + (-18 + 12 * b + 6 * c) * x**2 + (6 - 2 * b)) / 6
        far = ((-b - 6 * c) * x**3 + (6 * b + 30 * c) * x**2 + (-12 * b - 48 * c) * x + (8 * b + 24 * c)) / 6
        return np.where(x < 1, near, np.where(x < 2, far, 0.0))

    return f


def _lanczos3(d: np.ndarray) -> np.ndarray:
    return np.where(np.abs(d) < 3, np.sinc(d) * np.sinc(d / 3), 0.0)


def _keys(a: float) -> Callable[[np.ndarray], np.ndarray]:
    """Keys (1981) cubic convolution kernel with parameter a."""

    def f(d: np.ndarray) -> np.ndarray:
        x = np.abs(d)
        near = (a + 2) * x**3 - (a + 3) * x**2 + 1
        far = a * (x**3 - 5 * x**2 + 8 * x - 4)
        return np.where(x < 1, near, np.where(x <= 2, far, 0.0))

    return f


def _blackman_harris(d: np.ndarray) -> np.ndarray:
    """Harris (1978) 4-term window, N-1 = 3 samples wide, centred on 0."""
    n = d / 3.0 + 0.5  # 0..1 across the window
    w = sum(c * np.cos(2 * np.pi * k * n) * (-1) ** k for k, c in enumerate((0.35875, 0.48829, 0.14128, 0.01168)))
    return np.where(np.abs(d) <= 1.5, w, 0.0)


def _bspline(d: np.ndarray) -> np.ndarray:
    x = np.abs(d)
    return np.where(x < 1, 2 / 3 - x**2 + x**3 / 2, np.where(x < 2, (2 - x) ** 3 / 6, 0.0))


# name -> (half-width at scale 1, weight as a function of distance in filter units); OpenImageIO's filter.cpp
# names and widths (its width is twice the half-width), written from the papers.
FILTERS: dict[str, tuple[float, Callable[[np.ndarray], np.ndarray]]] = {
    "box": (0.5, lambda d: (np.abs(d) <= 0.5).astype(np.float64)),
    "triangle": (1.0, lambda d: np.maximum(0.0, 1.0 - np.abs(d))),
    "catmull-rom": (2.0, _cubic(0.0, 0.5)),
    "mitchell": (2.0, _cubic(1 / 3, 1 / 3)),
    "lanczos3": (3.0, _lanczos3),
    "nuke-lanczos6": (3.0, _lanczos3),
    "blackman-harris": (1.5, _blackman_harris),
    "bspline": (2.0, _bspline),
    "cubic": (2.0, _keys(0.0)),
    "keys": (2.0, _keys(-0.5)),
    "simon": (2.0, _keys(-0.75)),
    "rifman": (2.0, _keys(-1.0)),
    "gaussian": (1.5, lambda d: np.where(np.abs(d) < 1.5, np.exp(-2 * (d / 1.5) ** 2), 0.0)),
    "sharp-gaussian": (1.0, lambda d: np.where(np.abs(d) < 1, np.exp(-4 * d**2), 0.0)),
    "sinc": (2.0, lambda d: np.where(np.abs(d) <= 2, np.sinc(d), 0.0)),
}


def resize_weights(n_src: int, n_dst: int, filter_name: str) -> tuple[np.ndarray, np.ndarray]:
    """(n_dst, n_src) weight matrix for one axis and the matching 'tap reads this source pixel' mask.

    Output x samples source coordinate (x + 0.5) * n_src / n_dst - 0.5; when shrinking the filter is
    stretched by n_src / n_dst; taps ceil(c - support) .. floor(c + support), clamped to the image;
    weights normalised to sum 1.
    """
    radius, f = FILTERS[filter_name]
    scale = max(1.0, n_src / n_dst)
    support = radius * scale
    weights = np.zeros((n_dst, n_src))
    touched = np.zeros((n_dst, n_src), dtype=bool)
    for x in range(n_dst):
        center = (x + 0.5) * n_src / n_dst - 0.5
        taps = np.arange(math.ceil(center - support - 1e-9), math.floor(center + support + 1e-9) + 1)
        w = f((taps - center) / scale)
        for i, tap in enumerate(taps):
            if abs(abs(tap - center) - support) <= 1e-9 * support and filter_name in _STEP_EDGE:
                w[i] = f(np.sign(tap - center) * radius * (1 - 1e-12)) if _oiio_counts(filter_name, x, tap,
                                                                                       n_src, n_dst) else 0.0
        src = np.clip(taps, 0, n_src - 1)
        np.add.at(weights[x], src, w / w.sum())
        touched[x, src] = True
    return weights, touched


# Filters that stop with a step at their radius: whether a tap exactly there counts is a rounding, decided as
# OpenImageIO's resize decides it (float32), so that oxi and oiiotool agree (filter.cpp: box and blackman-harris
# test |x| <= edge, the gaussians |x| < edge).
_STEP_EDGE = {"box": True, "blackman-harris": True, "gaussian": False, "sharp-gaussian": False}


def _oiio_counts(filter_name: str, x: int, tap: int, n_src: int, n_dst: int) -> bool:
    """Whether OIIO's resize_ (imagebufalgo_xform.cpp) gives source `tap` a weight for output `x`, its float32
    statements one by one (full windows at 0)."""
    f32 = np.float32
    ratio = f32(n_dst) / f32(n_src)
    width = f32(2 * FILTERS[filter_name][0]) * max(f32(1), ratio)
    s = (f32(x) + f32(0.5)) * (f32(1) / f32(n_dst))
    src_xf = s * f32(n_src)
    src_x = math.floor(src_xf)
    frac = src_xf - f32(src_x)
    d = abs(ratio * (f32(tap - src_x) - (frac - f32(0.5))))
    if _STEP_EDGE[filter_name]:
        return bool(d <= width * f32(0.5))
    return bool(d * (f32(2) / width) < f32(1))


def blur_weights(n: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """(n, n) weight matrix of the clamp-to-edge Gaussian (taps -R..R, R = ceil(3σ)) and its read mask."""
    r = math.ceil(3 * sigma)
    k = np.arange(-r, r + 1)
    w = np.exp(-(k * k) / (2.0 * sigma * sigma))
    w /= w.sum()
    weights = np.zeros((n, n))
    touched = np.zeros((n, n), dtype=bool)
    for x in range(n):
        src = np.clip(x + k, 0, n - 1)
        np.add.at(weights[x], src, w)
        touched[x, src] = True
    return weights, touched


def separable(img: np.ndarray, wy: np.ndarray, wx: np.ndarray) -> np.ndarray:
    """Apply per-axis weight matrices to an (H, W, C) image in float64: along x, then along y."""
    rows = np.einsum("xj,yjc->yxc", wx, img.astype(np.float64))
    return np.einsum("yi,ixc->yxc", wy, rows)


def separable_magnitude(img: np.ndarray, wy: np.ndarray, wx: np.ndarray) -> np.ndarray:
    """Σ|w|·|v| per output: the size of the terms a float32 kernel adds, which bounds its rounding error."""
    return separable(np.abs(img.astype(np.float64)), np.abs(wy), np.abs(wx))


def resize(img: np.ndarray, width: int, height: int, filter_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Resized float64 image and, per value, Σ|w|·|v| (see `separable_magnitude`)."""
    h, w, _ = img.shape
    wy, wx = resize_weights(h, height, filter_name)[0], resize_weights(w, width, filter_name)[0]
    return separable(img, wy, wx), separable_magnitude(img, wy, wx)


def blur(img: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Blurred float64 image and, per value, Σ|w|·|v| (see `separable_magnitude`)."""
    h, w, _ = img.shape
    wy, wx = blur_weights(h, sigma)[0], blur_weights(w, sigma)[0]
    return separable(img, wy, wx), separable_magnitude(img, wy, wx)


# --- windows: resize and blur of an EXR's data window inside its display window ------------------------

Box = tuple[int, int, int, int]  # (x, y, width, height)


def oiio_read(img: np.ndarray, data: Box, display: Box, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """The (len(ys), len(xs), C) values at absolute positions ys x xs of an (H, W, C) image over `data`, as
    OIIO's ImageBuf reads around a data window: a data pixel as it is; any other position clamped to the
    display window on both axes, black unless that lands on a data pixel."""
    y, x = np.meshgrid(ys, xs, indexing="ij")

    def held(yy: np.ndarray, xx: np.ndarray) -> np.ndarray:
        return (xx >= data[0]) & (xx < data[0] + data[2]) & (yy >= data[1]) & (yy < data[1] + data[3])

    inside = held(y, x)
    cx = np.clip(x, display[0], display[0] + display[2] - 1)
    cy = np.clip(y, display[1], display[1] + display[3] - 1)
    sx, sy = np.where(inside, x, cx) - data[0], np.where(inside, y, cy) - data[1]
    value = img[np.clip(sy, 0, data[3] - 1), np.clip(sx, 0, data[2] - 1)].astype(np.float64)
    return np.where((inside | held(cy, cx))[..., None], value, 0.0)


def _window_taps(centres: np.ndarray, support: float, weigh: Callable[[np.ndarray], np.ndarray]) -> tuple:
    """Per centre (absolute, in pixel-index units), its taps ceil(c - support)..floor(c + support) and their
    weights normalised over all of them."""
    first = np.ceil(centres - support).astype(int)
    count = int((np.floor(centres + support) - first).max()) + 1
    pos = first[:, None] + np.arange(count)[None, :]
    w = np.where(pos <= np.floor(centres + support)[:, None], weigh(pos - centres[:, None]), 0.0)
    return pos, w / w.sum(axis=1, keepdims=True)


def _windowed(img: np.ndarray, data: Box, display: Box, rows: tuple, cols: tuple) -> tuple[np.ndarray, np.ndarray]:
    (py, wy), (px, wx) = rows, cols
    ys, xs = np.arange(py.min(), py.max() + 1), np.arange(px.min(), px.max() + 1)
    read = oiio_read(img, data, display, ys, xs)
    out = []
    for values, ky, kx in ((read, wy, wx), (np.abs(read), np.abs(wy), np.abs(wx))):
        r = np.einsum("ot,otxc->oxc", ky, values[py - ys[0]])
        out.append(np.einsum("xt,oxtc->oxc", kx, r[:, px - xs[0]]))
    return out[0], out[1]


def windowed_resize(img: np.ndarray, data: Box, display: Box, out_data: Box, out_display: Box,
                    filter_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Resize as OIIO's ImageBufAlgo::resize (float64): output pixel x (absolute) samples the input at
    display.x + (x - out_display.x + 0.5) * display.w / out_display.w - 0.5, the filter stretched when
    shrinking, weights normalised over every tap, taps read by `oiio_read`; and Σ|w|·|v| per value."""
    radius, f = FILTERS[filter_name]
    axes = []
    for i in (1, 0):
        ratio = display[2 + i] / out_display[2 + i]
        stretch = max(1.0, ratio)
        x = out_data[i] + np.arange(out_data[2 + i])
        centres = display[i] + (x - out_display[i] + 0.5) * ratio - 0.5
        axes.append(_window_taps(centres, radius * stretch, lambda d, s=stretch: f(d / s)))
    return _windowed(img, data, display, axes[0], axes[1])


def windowed_blur(img: np.ndarray, data: Box, display: Box, out_data: Box, sigma: float) -> tuple[np.ndarray,
                                                                                                    np.ndarray]:
    """The Gaussian (taps -R..R, R = ceil(3σ)) of output window `out_data`, taps read by `oiio_read`, float64;
    and Σ|w|·|v| per value."""
    r = math.ceil(3 * sigma)
    axes = [_window_taps((out_data[i] + np.arange(out_data[2 + i])).astype(np.float64), float(r),
                         lambda d: np.exp(-(d * d) / (2.0 * sigma * sigma))) for i in (1, 0)]
    return _windowed(img, data, display, axes[0], axes[1])


# --- colour ops ------------------------------------------------------------------------------------------

LUMA = np.array([0.2126, 0.7152, 0.0722])
# One float32 rounding (unit roundoff): the perturbation used to measure how sensitive a result is.
U32 = 2.0**-24


def cdl(
    rgb: np.ndarray,
    slope: Sequence[float],
    offset: Sequence[float],
    power: Sequence[float],
    sat: float,
    style: str,
) -> tuple[np.ndarray, np.ndarray]:
    """CDL of (..., 3) inputs in float64 as OCIO's CDL renderer does it, and the magnitude rounding acts on.

    Non-finite inputs follow OCIO: a NaN after slope/offset becomes 0 before the power (both styles; `asc`
    then clamps ±Inf to 0 / 1); in `noclamp` an infinite channel makes the saturation step Inf - Inf, so the
    whole pixel turns NaN.

    Any float32 evaluation rounds the terms it adds and multiplies, so its error is a few roundings of the
    largest term, not of a result that cancellation made small. The terms are: in*slope and offset, pushed
    through the power curve (steep near 0 when power < 1, measured by perturbing its base by one rounding
    of those terms), the luma of the powered values, and sat times their difference from luma. The
    second array is the largest of those magnitudes per value (at least |out|), for relative comparisons.
    """
    x = rgb.astype(np.float64)
    s, o, p = (np.asarray(v, dtype=np.float64) for v in (slope, offset, power))
    with np.errstate(invalid="ignore", over="ignore"):
        v = x * s + o
        v = np.where(np.isnan(v), 0.0, v)
        # An infinite input is not perturbed by rounding: it is exact, or clamped to an exact 0 / 1.
        dv = np.where(np.isfinite(x), U32 * (np.abs(x * s) + np.abs(o)), 0.0)
        if style == "asc":

            def curve(t: np.ndarray) -> np.ndarray:
                return np.clip(t, 0.0, 1.0) ** p

        else:

            def curve(t: np.ndarray) -> np.ndarray:
                # Negative bases pass unchanged (OCIO CDL_NO_CLAMP).
                return np.where(t < 0, t, np.abs(t) ** p)

        y = curve(v)
        sens = np.maximum(np.abs(curve(v + dv) - y), np.abs(curve(v - dv) - y)) / U32
        my = np.maximum(np.abs(y), sens)
        luma = (y @ LUMA)[..., None]
        lm = (my @ LUMA)[..., None]
        out = luma + sat * (y - luma)
        if style == "asc":
            out = np.clip(out, 0.0, 1.0)
        scale = np.maximum(np.maximum(np.abs(out), lm), sat * np.maximum(my, lm))
    return out, scale


def matrix(rgba: np.ndarray, m: np.ndarray, offset: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """out = M · v + offset on (..., 4) in float64, and Σ|m||v| + |offset| (the scale of float32 rounding)."""
    v = rgba.astype(np.float64)
    m = np.asarray(m, dtype=np.float64).reshape(4, 4)
    off = np.asarray(offset, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # NaN/Inf inputs give NaN/Inf outputs, as in OCIO
        return v @ m.T + off, np.abs(v) @ np.abs(m).T + np.abs(off)


def lut_index(x: np.ndarray, lo: float, hi: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower grid index and fraction for inputs x: clamped to the domain, NaN taken as the minimum."""
    t = (x.astype(np.float64) - lo) / (hi - lo) * (n - 1)
    t = np.clip(np.nan_to_num(t, nan=0.0, posinf=n - 1, neginf=0.0), 0.0, n - 1)
    base = np.minimum(np.floor(t), n - 2).astype(np.int64)
    return base, t - base


def lut1d(
    rgb: np.ndarray, table: np.ndarray, lo: Sequence[float] = (0, 0, 0), hi: Sequence[float] = (1, 1, 1)
) -> np.ndarray:
    """Per-channel linear interpolation of an (N, 3) table; inputs clamp to the domain."""
    t = np.asarray(table, dtype=np.float64)
    out = np.empty(rgb.shape[:-1] + (3,))
    for c in range(3):
        i, f = lut_index(rgb[..., c], lo[c], hi[c], t.shape[0])
        out[..., c] = t[i, c] * (1 - f) + t[i + 1, c] * f
    return out


def lut3d(
    rgb: np.ndarray,
    table: np.ndarray,
    lo: Sequence[float] = (0, 0, 0),
    hi: Sequence[float] = (1, 1, 1),
    interp: str = "tetrahedral",
) -> np.ndarray:
    """3D LUT lookup of (..., 3) inputs in float64; table is (N, N, N, 3) indexed [r, g, b].

    Tetrahedral uses the 6-tetrahedra split along the black-white diagonal (as OCIO's Lut3D renderer):
    the tetrahedron is picked by the order of the red, green, blue fractions.
    """
    t = np.asarray(table)  # gathered corners go to float64; a 256³ table stays float32 (200 MB, not 400)
    n = t.shape[0]
    (ri, fr), (gi, fg), (bi, fb) = (lut_index(rgb[..., c], lo[c], hi[c], n) for c in range(3))

    def corner(dr: int, dg: int, db: int) -> np.ndarray:
        return t[ri + dr, gi + dg, bi + db].astype(np.float64)

    fr, fg, fb = fr[..., None], fg[..., None], fb[..., None]
    if interp == "trilinear":
        out = np.zeros(rgb.shape[:-1] + (3,))
        for dr in (0, 1):
            for dg in (0, 1):
                for db in (0, 1):
                    w = (fr if dr else 1 - fr) * (fg if dg else 1 - fg) * (fb if db else 1 - fb)
                    out += w * corner(dr, dg, db)
        return out
    c000, c111 = corner(0, 0, 0), corner(1, 1, 1)
    # (condition, first axis corner, second corner, fractions largest..smallest) for each tetrahedron.
    cases = [
        ((fr > fg) & (fg > fb), corner(1, 0, 0), corner(1, 1, 0), (fr, fg, fb)),
        ((fr > fg) & (fg <= fb) & (fr > fb), corner(1, 0, 0), corner(1, 0, 1), (fr, fb, fg)),
        ((fr > fg) & (fb >= fr), corner(0, 0, 1), corner(1, 0, 1), (fb, fr, fg)),
        ((fr <= fg) & (fb > fg), corner(0, 0, 1), corner(0, 1, 1), (fb, fg, fr)),
        ((fr <= fg) & (fb <= fg) & (fb > fr), corner(0, 1, 0), corner(0, 1, 1), (fg, fb, fr)),
        ((fr <= fg) & (fb <= fr), corner(0, 1, 0), corner(1, 1, 0), (fg, fr, fb)),
    ]
    out = np.zeros(rgb.shape[:-1] + (3,))
    covered = np.zeros(rgb.shape[:-1] + (1,), dtype=bool)
    for cond, c1, c2, (a, b, c) in cases:
        value = (1 - a) * c000 + (a - b) * c1 + (b - c) * c2 + c * c111
        out = np.where(cond, value, out)
        assert not (covered & cond).any()
        covered |= cond
    assert covered.all()
    return out
