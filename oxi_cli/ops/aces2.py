"""The ACES 2.0 output transform (OCIO's FixedFunction ACES2_OutputTransform): ACES AP0 to display-linear RGB."""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded, check_finite
from oxi_cli.ops.codes import ACES2_OUTPUT
from oxi_cli.user_cache import cache_dir, private, save_npz

# The maths follows OpenColorIO's ops/fixedfunction/ACES2 (Transform.cpp, Common.h): a CAM16-like
# J, M, h model, a tone scale on J, chroma compression towards the reach gamut (AP1) and gamut compression
# into the limiting gamut. The per-pixel kernels (backends/cpu/kernels/aces2.py, wgsl/aces2.wgsl) get the
# constants below as parameters and the hue-indexed tables OCIO builds, computed here the way OCIO computes
# them (float32, op for op: see f32 below).

Primaries = tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]

AP0: Primaries = ((0.7347, 0.2653), (0.0, 1.0), (0.0001, -0.077), (0.32168, 0.33767))
AP1: Primaries = ((0.713, 0.293), (0.165, 0.830), (0.128, 0.044), (0.32168, 0.33767))
CAM16: Primaries = ((0.8336, 0.1735), (2.3854, -1.4659), (0.087, -0.125), (0.333, 0.333))

PI = float(np.float32(3.14159265358979))  # OCIO's float PI: hues go through it in both directions
REFERENCE_LUMINANCE = 100.0
L_A, Y_B = 100.0, 20.0
SURROUND = (0.9, 0.59, 0.9)
CAM_NL_SCALE = 4.0 * 100.0
CHROMA_COMPRESS, CHROMA_COMPRESS_FACT = 2.4, 3.3
CHROMA_EXPAND, CHROMA_EXPAND_FACT, CHROMA_EXPAND_THR = 1.3, 0.69, 0.5
SMOOTH_CUSPS, SMOOTH_M = 0.12, 0.27
CUSP_MID_BLEND, FOCUS_GAIN_BLEND = 1.3, 0.3
FOCUS_DISTANCE, FOCUS_DISTANCE_SCALING = 1.35, 1.75
# Hue tables: 360 nominal entries at [1..360], one below and two above repeating the other end.
NOMINAL, TABLE_ROWS = 360, 363
# Columns of the op's table, one row per table index: the cusp table is sampled at the (non-uniform) hues
# of the first column; the reach column at uniform whole degrees (row i holds hue i - 1).
HUE, CUSP_J, CUSP_M, GAMMA_TOP_INV, REACH_M = range(5)
# Parameters (Encoded.params), in order: four 3x3 matrices row-major, then the scalars.
PARAM_NAMES = (
    *(f"rgb_to_cam_{i}" for i in range(9)),   # AP0 -> chromatically adapted cone responses
    *(f"cone_to_aab_{i}" for i in range(9)),  # compressed cones -> A, a, b (input viewing conditions)
    *(f"aab_to_cone_{i}" for i in range(9)),  # A, a, b -> compressed cones (limiting gamut)
    *(f"cam_to_rgb_{i}" for i in range(9)),   # cones -> limiting-gamut RGB
    "cz", "inv_cz", "a_w_j", "inv_a_w_j", "f_l_n",
    "s_2", "m_2", "g", "t_1", "n_r", "limit_j_max",
    "sat", "sat_thr", "compr", "chroma_compress_scale",
    "mid_j", "focus_dist", "lower_hull_gamma_inv", "search_lo", "search_hi",
)


@dataclass(frozen=True)
class Aces2Output(ColorOp):
    """ACES AP0 in, display-linear RGB of the limiting primaries out (1.0 = 100 nits): tone scale to
    `peak_luminance` nits and gamut mapping into the limiting gamut, whose primaries and white are
    (rx, ry, gx, gy, bx, by, wx, wy). Forward only; OCIO's inverse stays with OCIO."""

    peak_luminance: float
    limiting_primaries: tuple[float, float, float, float, float, float, float, float]
    name: ClassVar[str] = "aces2_output"
    flops_per_pixel: ClassVar[int] = 420  # 14 pows, atan2, sin, cos, a few sqrt, three 3x3 matrices

    def __post_init__(self) -> None:
        prims = tuple(float(v) for v in self.limiting_primaries)
        if len(prims) != 8:
            raise OpError(f"ACES 2.0 output needs 8 limiting chromaticities, got {len(prims)}")
        check_finite("ACES 2.0 limiting primaries", prims)
        check_finite("ACES 2.0 peak luminance", [float(self.peak_luminance)])
        if not 1.0 <= self.peak_luminance <= 10000.0:
            raise OpError(f"ACES 2.0 peak luminance must be 1..10000 nits, got {self.peak_luminance}")
        object.__setattr__(self, "peak_luminance", float(self.peak_luminance))
        object.__setattr__(self, "limiting_primaries", prims)

    def encode(self, has_alpha: bool) -> Encoded:
        params, table = aces2_tables(self.peak_luminance, self.limiting_primaries)
        return Encoded(ACES2_OUTPUT, params.tolist(), table)

    def table_bytes(self) -> int:
        return TABLE_ROWS * 16 * 2  # five columns: two vec4 per row at most


@functools.lru_cache(maxsize=16)
def aces2_tables(peak: float, limiting: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The op's float32 parameters (PARAM_NAMES) and (TABLE_ROWS, 5) table for one peak and limiting gamut,
    as OCIO's Renderer_ACES_OutputTransform20 sets them up (read-only arrays). Building them takes 0.1-0.3 s
    (OCIO's per-hue searches), so they are also kept in the user's cache folder, keyed by this file's text."""
    limiting = tuple(float(v) for v in limiting)
    path = _cache_path(float(peak), limiting)
    usable = private(str(path.parent))  # tables someone else wrote would decide this user's pixels
    saved = _load(path) if usable else None
    if saved is None:
        params, table = _build_tables(peak, limiting)
        if usable:
            save_npz(path, params=params, table=table)
    else:
        params, table = saved
    params.setflags(write=False)
    table.setflags(write=False)
    return params, table


def _load(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    try:
        with np.load(path, allow_pickle=False) as saved:
            return saved["params"], saved["table"]
    except (OSError, KeyError, ValueError):
        return None


def _cache_path(peak: float, limiting: tuple[float, ...]) -> Path:
    key = hashlib.sha1(Path(__file__).read_bytes() + repr((peak, limiting)).encode()).hexdigest()[:20]
    return Path(cache_dir("aces2", f"{key}.npz"))


def _build_tables(peak: float, limiting: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    lim_prims: Primaries = tuple(  # type: ignore[assignment]
        (float(np.float32(limiting[2 * i])), float(np.float32(limiting[2 * i + 1]))) for i in range(4)
    )
    peak = float(np.float32(peak))
    p_in, p_lim, reach = _Jmh(AP0), _Jmh(lim_prims), _Jmh(AP1)
    ts = _ToneScale(peak)
    limit_j_max = p_in.y_to_j(peak)
    reach_m = _reach_m_table(reach, limit_j_max)
    log_peak = ts.log_peak
    expand, compress = f32(CHROMA_EXPAND), f32(CHROMA_COMPRESS)
    sat = max(f32(0.2), expand - (expand * f32(CHROMA_EXPAND_FACT)) * log_peak)
    sat_thr = f32(CHROMA_EXPAND_THR) / f32(peak)
    compr = compress + (compress * f32(CHROMA_COMPRESS_FACT)) * log_peak
    chroma_scale = _pow(f32(0.03379) * f32(peak), float(f32(0.30596))) - f32(0.45135)
    mid_j = p_in.y_to_j(ts.c_t * f32(REFERENCE_LUMINANCE))
    focus = f32(FOCUS_DISTANCE)
    focus_dist = focus + focus * f32(FOCUS_DISTANCE_SCALING) * log_peak
    lower_gamma_inv = f32(1.0) / (f32(1.14) + f32(0.07) * log_peak)
    hues, cusp = _cusp_table(reach, p_lim, peak, ts.forward_limit, limit_j_max)
    search = _hue_search_range(hues)
    gamma_inv = _upper_hull_gamma(hues, cusp, peak, limit_j_max, mid_j, focus_dist, lower_gamma_inv, p_lim)
    params = np.array([
        *p_in.rgb_to_cam.ravel(), *p_in.cone_to_aab.ravel(), *p_lim.aab_to_cone.ravel(), *p_lim.cam_to_rgb.ravel(),
        p_in.cz, p_in.inv_cz, p_in.a_w_j, p_in.inv_a_w_j, p_in.f_l_n,
        ts.s_2, ts.m_2, ts.g, ts.t_1, ts.n_r, limit_j_max,
        sat, sat_thr, compr, chroma_scale,
        mid_j, focus_dist, lower_gamma_inv, *search,
    ], np.float32)
    assert params.size == len(PARAM_NAMES)
    table = np.stack([hues, cusp[:, 0], cusp[:, 1], gamma_inv, reach_m], axis=1).astype(np.float32)
    return params, table


# OCIO computes the parameters and tables in float32, op by op; so does this module: numpy float32 arrays do
# + - * / and sqrt exactly as C's float, and the transcendental functions below are glibc's powf, logf...
# (correctly rounded in nearly all cases): the double result rounded to float32. Bit-equal parameters let the
# kernels repeat OCIO's rounding, which matters where a display channel is a small difference of large terms.
f32 = np.float32


def _pow(x: np.ndarray | float, y: float) -> np.ndarray:
    return (np.asarray(x, np.float64) ** np.float64(y)).astype(np.float32)


def _fn(fn: object, *args: np.ndarray | float) -> np.ndarray:
    return fn(*(np.asarray(a, np.float64) for a in args)).astype(np.float32)  # type: ignore[operator]


def _npm(prims: Primaries) -> np.ndarray:
    """RGB -> XYZ of a set of primaries and white (Y of white = 1), no chromatic adaptation (double)."""
    xy = np.asarray(prims, np.float64)
    xyz = np.stack([xy[:, 0], xy[:, 1], 1.0 - xy[:, 0] - xy[:, 1]])  # columns: R, G, B, W
    white = xyz[:, 3] / xyz[1, 3]
    return xyz[:, :3] * np.linalg.solve(xyz[:, :3], white)


def _mul33(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """OCIO's mult_f33_f33 in float32, terms summed left to right."""
    return np.array([[a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j] for j in range(3)]
                     for i in range(3)], np.float32)


def _apply(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    """OCIO's mult_f3_f33 on float32 rows of 3."""
    return np.stack([v[..., 0] * m[i, 0] + v[..., 1] * m[i, 1] + v[..., 2] * m[i, 2] for i in range(3)], axis=-1)


def _inv33(m: np.ndarray) -> np.ndarray:
    """OCIO's invert_f33: the float matrix inverted in double, rounded to float."""
    return np.linalg.inv(m.astype(np.float64)).astype(np.float32)


NL_OFFSET = f32(f32(0.2713) * f32(100.0))
NL_POWER = float(f32(0.42))
NL_POWER_INV = float(f32(1.0) / f32(0.42))


def _compress(x: np.ndarray) -> np.ndarray:
    """CAM16's post-adaptation cone response compression, odd in x."""
    x = np.asarray(x, np.float32)
    f = _pow(np.abs(x), NL_POWER)
    return np.copysign(f / (NL_OFFSET + f), x)


def _compress_inv(x: np.ndarray) -> np.ndarray:
    ra = np.minimum(np.abs(x), f32(0.99))
    return np.copysign(_pow(NL_OFFSET * ra / (f32(1.0) - ra), NL_POWER_INV), x)


def _model_gamma() -> np.float32:
    return f32(SURROUND[1]) * (f32(1.48) + np.sqrt(f32(Y_B) / f32(REFERENCE_LUMINANCE)))


F_PI = f32(PI)


class _Jmh:
    """OCIO's JMhParams for one set of primaries (float32), with the conversions the tables need (rows)."""

    def __init__(self, prims: Primaries) -> None:
        third = f32(1.0) / f32(9.0)
        base = np.array([[2.0, 1.0, f32(1.0) / f32(20.0)], [1.0, f32(-12.0) / f32(11.0), f32(1.0) / f32(11.0)],
                         [third, third, f32(-2.0) / f32(9.0)]], np.float32)
        to_cam16 = np.linalg.inv(_npm(CAM16)).astype(np.float32)
        to_xyz = _npm(prims).astype(np.float32)
        xyz_w = _apply(to_xyz, np.full(3, REFERENCE_LUMINANCE, np.float32))
        rgb_w = _apply(to_cam16, xyz_w)
        k = f32(1.0) / (f32(5.0) * f32(L_A) + f32(1.0))
        k4 = k * k * k * k
        f_l = f32(0.2) * k4 * (f32(5.0) * f32(L_A)) + f32(0.1) * _pow(f32(1.0) - k4, 2.0) * _pow(
            f32(5.0) * f32(L_A), float(f32(1.0) / f32(3.0)))
        self.f_l_n = f32(f_l / f32(REFERENCE_LUMINANCE))
        self.cz = _model_gamma()
        self.inv_cz = f32(1.0) / self.cz
        d_rgb = self.f_l_n * xyz_w[1] / rgb_w
        cone_to_aab = f32(CAM_NL_SCALE) * base
        rgb_aw = _compress(d_rgb * rgb_w)
        a_w = cone_to_aab[0, 0] * rgb_aw[0] + cone_to_aab[0, 1] * rgb_aw[1] + cone_to_aab[0, 2] * rgb_aw[2]
        f = _pow(f_l, NL_POWER)
        self.a_w_j = f32(f / (NL_OFFSET + f))
        self.inv_a_w_j = f32(1.0) / self.a_w_j
        to_cam = _mul33(to_cam16, to_xyz) * f32(REFERENCE_LUMINANCE)
        self.rgb_to_cam = d_rgb[:, None] * to_cam
        self.cam_to_rgb = _inv33(self.rgb_to_cam)
        ab_scale = f32(43.0)
        self.cone_to_aab = np.concatenate([cone_to_aab[:1] / a_w, cone_to_aab[1:] * ab_scale * f32(SURROUND[2])])
        self.aab_to_cone = _inv33(self.cone_to_aab)

    def y_to_j(self, y: float) -> np.float32:
        ra = _compress(f32(abs(y)) * self.f_l_n)
        return f32(np.copysign(f32(100.0) * _pow(ra * self.inv_a_w_j, float(self.cz)), y))

    def aab(self, rgb: np.ndarray) -> np.ndarray:
        return _apply(self.cone_to_aab, _compress(_apply(self.rgb_to_cam, np.asarray(rgb, np.float32))))

    def hue(self, r: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        """jmh()'s hue alone, from R, G, B planes (the cusp search calls it thousands of times)."""
        m, c = self.rgb_to_cam, self.cone_to_aab
        c0, c1, c2 = (_compress(r * m[i, 0] + g * m[i, 1] + b * m[i, 2]) for i in range(3))
        h = f32(180.0) * np.arctan2(c0 * c[2, 0] + c1 * c[2, 1] + c2 * c[2, 2],
                                    c0 * c[1, 0] + c1 * c[1, 1] + c2 * c[1, 2]) / F_PI
        return np.where(h < 0.0, h + f32(360.0), h)

    def jmh(self, rgb: np.ndarray) -> np.ndarray:
        """RGB rows -> J, M, h (degrees in [0, 360)); A <= 0 gives 0, 0, 0 as OCIO's Aab_to_JMh."""
        aab = self.aab(rgb)
        a = np.maximum(aab[:, 0], f32(0.0))
        h = f32(180.0) * np.arctan2(aab[:, 2], aab[:, 1]) / F_PI  # float32: libm atan2f, as OCIO
        h = np.where(h < 0.0, h + f32(360.0), h)
        out = np.stack([f32(100.0) * _pow(a, float(self.cz)), np.sqrt(aab[:, 1] * aab[:, 1] + aab[:, 2] * aab[:, 2]),
                        h], axis=1)
        return np.where((aab[:, :1] > 0.0), out, f32(0.0))

    def rgb(self, jmh: np.ndarray) -> np.ndarray:
        jmh = np.asarray(jmh, np.float32)
        h = F_PI * jmh[:, 2] / f32(180.0)
        aab = np.stack([_pow(jmh[:, 0] * (f32(1.0) / f32(100.0)), float(self.inv_cz)),
                        jmh[:, 1] * _fn(np.cos, h), jmh[:, 1] * _fn(np.sin, h)], axis=1)
        return _apply(self.cam_to_rgb, _compress_inv(_apply(self.aab_to_cone, aab)))


class _ToneScale:
    """OCIO's init_ToneScaleParams (float32): the tone curve for a peak luminance in nits."""

    def __init__(self, peak: float) -> None:
        one = f32(1.0)
        n, self.n_r, self.g, self.t_1 = f32(peak), f32(100.0), f32(1.15), f32(0.04)
        c, c_d, w_g, r_hit_min, r_hit_max = f32(0.18), f32(10.013), f32(0.14), f32(128.0), f32(896.0)
        decades = _fn(np.log, n / self.n_r) / _fn(np.log, f32(10000.0) / f32(100.0))
        r_hit = r_hit_min + (r_hit_max - r_hit_min) * decades
        m_0 = n / self.n_r
        m_1 = f32(0.5) * (m_0 + np.sqrt(m_0 * (m_0 + f32(4.0) * self.t_1)))
        u = _pow((r_hit / m_1) / ((r_hit / m_1) + one), float(self.g))
        m = m_1 / u
        w_i = _fn(np.log, n / f32(100.0)) / _fn(np.log, f32(2.0))
        self.c_t = c_d / self.n_r * (one + w_i * w_g)
        g_ip = f32(0.5) * (self.c_t + np.sqrt(self.c_t * (self.c_t + f32(4.0) * self.t_1)))
        g_inv = float(one / self.g)
        g_ipp2 = -(m_1 * _pow(g_ip / m, g_inv)) / (_pow(g_ip / m, g_inv) - one)
        w_2 = c / g_ipp2
        self.s_2 = w_2 * m_1 * f32(REFERENCE_LUMINANCE)
        u_2 = _pow((r_hit / m_1) / ((r_hit / m_1) + w_2), float(self.g))
        self.m_2 = m_1 / u_2
        self.forward_limit = f32(8.0) * r_hit
        self.log_peak = _fn(np.log10, n / self.n_r)


def _wrap(nominal: np.ndarray, shift: float = 0.0) -> np.ndarray:
    """A table's 360 nominal rows with OCIO's wrap rows: the last one first, the first two last (+ shift)."""
    return np.concatenate([nominal[-1:] - f32(shift), nominal, nominal[:2] + f32(shift)])


def _lerp(a: np.ndarray | float, b: np.ndarray | float, t: np.ndarray | float) -> np.ndarray:
    return (b - a) * t + a  # OCIO's lerpf


def _reach_m_table(reach: _Jmh, limit_j_max: np.float32) -> np.ndarray:
    """Per whole degree, the largest M at J = limit_j_max still inside the reach gamut (AP1, no negative
    channel): OCIO's steps of 50 up to 1300, then bisection to 0.01."""
    hues = np.arange(NOMINAL, dtype=np.float32)

    def outside(m: np.ndarray) -> np.ndarray:
        jmh = np.stack([np.full_like(hues, limit_j_max), m, hues], axis=1)
        return (reach.rgb(jmh) < 0.0).any(axis=1)

    return _wrap(_first_true(outside, f32(50.0), f32(1300.0), 1e-2))


def _unit_corners() -> np.ndarray:
    """The cube's six cusp corners in hue order R, Y, G, C, B, M (OCIO's generate_unit_cube_cusp_corners)."""
    i = np.arange(6)
    return np.stack([((i + 1) % 6) < 3, ((i + 5) % 6) < 3, ((i + 3) % 6) < 3], axis=1).astype(np.float32)


def _cycle(rows: np.ndarray, start: int, hues: bool) -> np.ndarray:
    """Six corner rows rotated to start at `start` (the lowest hue) placed at [1], with [0] and [7] repeating
    the ends; for JMh rows the hues there are wrapped by 360 so the cycle's hues keep rising."""
    rot = np.roll(rows, -start, axis=0)
    cycle = np.concatenate([rot[-1:], rot, rot[:1]])
    if hues:
        cycle[0, 2] -= f32(360.0)
        cycle[7, 2] += f32(360.0)
    return cycle


def _reach_corners(reach: _Jmh, limit_j: np.float32, maximum: np.float32) -> np.ndarray:
    """JMh of the AP1 cube corners scaled until their J reaches limit_j (bisection on A to 1e-3)."""
    corners = _unit_corners()
    limit_a = _pow(limit_j * (f32(1.0) / f32(100.0)), float(reach.inv_cz))
    lower, upper = np.zeros(6, np.float32), np.full(6, maximum, np.float32)
    done = np.zeros(6, bool)
    while (busy := ((upper - lower) > f32(1e-3)) & ~done).any():
        test = (lower + upper) / f32(2.0)
        a = reach.aab(test[:, None] * corners)[:, 0]
        lower, upper = np.where(busy & (a < limit_a), test, lower), np.where(busy & (a >= limit_a), test, upper)
        done |= busy & (a == limit_a)
    jmh = reach.jmh(upper[:, None] * corners)
    return _cycle(jmh, int(np.argmin(jmh[:, 2])), True)


def _build_hue_table(sorted_hues: list[np.float32]) -> np.ndarray:
    """OCIO's build_hue_table: 360 hues as evenly spaced as possible with every corner hue among them."""
    counts = [0] * (len(sorted_hues) + 2)
    last_idx = -1
    min_index = 0 if sorted_hues[0] == 0.0 else 1
    for k, hue in enumerate(sorted_hues):
        nominal = min(max(math.floor(float(hue) + 0.5), min_index), NOMINAL - 1)  # std::round, 1 row a degree
        if last_idx == nominal:
            if k > 1 and counts[k - 2] != counts[k - 1] - 1:
                counts[k - 1] -= 1
            else:
                nominal += 1
        counts[k] = min(nominal, NOMINAL - 1)
        last_idx = min_index = nominal
    table = np.zeros(NOMINAL, np.float32)
    total = 0
    bounds = [f32(0.0), *sorted_hues, f32(360.0)]
    for k in range(len(sorted_hues) + 1):
        samples = counts[0] if k == 0 else (counts[k] - counts[k - 1] if k < len(sorted_hues) else NOMINAL - total)
        lo, hi = bounds[k], bounds[k + 1]
        delta = (hi - lo) / f32(max(samples, 1))
        table[total: total + samples] = lo + np.arange(samples, dtype=np.float32) * delta
        total += samples
    return _wrap(table, 360.0)


def _cusp_table(reach: _Jmh, lim: _Jmh, peak: np.float32, forward_limit: np.float32,
                limit_j_max: np.float32) -> tuple[np.ndarray, np.ndarray]:
    """The hue table and, at its hues, the limiting gamut's cusp J and M (M widened by the cusp smoothing):
    per hue, a bisection along the limiting cube's edge between the two corners around it."""
    reach_jmh = _reach_corners(reach, limit_j_max, forward_limit)
    unit = _unit_corners() * (peak / f32(REFERENCE_LUMINANCE))
    display = lim.jmh(unit)
    start = int(np.argmin(display[:, 2]))
    rgb_corners, jmh_corners = _cycle(unit, start, False), _cycle(display, start, True)
    hues = _build_hue_table(sorted(set(reach_jmh[1:7, 2].tolist()) | set(jmh_corners[1:7, 2].tolist())))
    nominal = hues[1:1 + NOMINAL]
    # The corner segment each hue lies on: the first corner above it (from [1]; OCIO's default is 1).
    above = jmh_corners[1:, 2][None, :] > nominal[:, None]
    upper = np.where(above.any(axis=1), 1 + above.argmax(axis=1), 1)
    lower = upper - 1
    h_lo, h_hi = jmh_corners[lower, 2], jmh_corners[upper, 2]
    rgb_lo, rgb_hi = rgb_corners[lower], rgb_corners[upper]
    exact = h_lo == nominal
    # OCIO walks the hues in order and starts each bisection where the previous one on the same corner segment
    # ended: the segments run side by side here, each walking its own hues in order.
    segments = [np.flatnonzero(upper == u) for u in np.unique(upper)]
    final_t = np.zeros(NOMINAL, np.float32)
    start = np.zeros(len(segments), np.float32)
    for k in range(max(len(seg) for seg in segments)):
        live = [i for i, seg in enumerate(segments) if k < len(seg)]
        rows = np.array([segments[i][k] for i in live])
        lo_t, hi_t = start[live], np.ones(len(rows), np.float32)
        while (busy := (hi_t - lo_t) > f32(1e-7)).any():
            t = (lo_t + hi_t) / f32(2.0)
            h = lim.hue(*(_lerp(rgb_lo[rows, c], rgb_hi[rows, c], t) for c in range(3)))
            go_down = (h < h_lo[rows]) | ((h < h_hi[rows]) & (h > nominal[rows]))
            hi_t, lo_t = np.where(busy & go_down, t, hi_t), np.where(busy & ~go_down, t, lo_t)
        final_t[rows] = (lo_t + hi_t) / f32(2.0)
        start[live] = np.where(exact[rows], start[live], final_t[rows])
    jm = lim.jmh(_lerp(rgb_lo, rgb_hi, final_t[:, None]))[:, :2]
    jm = np.where(exact[:, None], jmh_corners[lower, :2], jm)
    jm[:, 1] *= f32(1.0) + f32(SMOOTH_M) * f32(SMOOTH_CUSPS)
    return hues, np.stack([_wrap(jm[:, 0]), _wrap(jm[:, 1])], axis=1)


def _hue_search_range(hues: np.ndarray) -> tuple[int, int]:
    """How far (in rows) a hue's interval can lie from its whole-degree row: bounds the per-pixel search."""
    i = np.arange(1, 1 + NOMINAL)
    delta = i - (1 + hues[1:1 + NOMINAL].astype(np.int64))
    return min(0, int(delta.min())), max(1, int(delta.max()) + 1)


def _focus_gain(j: np.ndarray, threshold: np.ndarray, limit_j_max: np.float32, focus_dist: np.float32) -> np.ndarray:
    adjust = _fn(np.log10, (limit_j_max - threshold) / np.maximum(f32(0.0001), limit_j_max - j))
    return np.where(j > threshold, limit_j_max * focus_dist * (adjust * adjust + f32(1.0)), limit_j_max * focus_dist)


def _solve_j_intersect(j: np.ndarray, m: np.ndarray, focus_j: np.ndarray, max_j: np.float32,
                       gain: np.ndarray) -> np.ndarray:
    m_scaled = m / gain
    a = m_scaled / focus_j
    b_lo = f32(1.0) - m_scaled
    below = f32(-2.0) * -j / (b_lo + np.sqrt(b_lo * b_lo - f32(4.0) * a * -j))
    b_hi = -(f32(1.0) + m_scaled + max_j * a)
    c_hi = max_j * m_scaled + j
    above = f32(-2.0) * c_hi / (b_hi - np.sqrt(b_hi * b_hi - f32(4.0) * a * c_hi))
    return np.where(j < focus_j, below, above)


def _line_boundary_m(j_axis: np.ndarray, slope: np.ndarray, inv_gamma: np.ndarray | np.float32,
                     j_max: np.ndarray | np.float32, m_max: np.ndarray, j_ref: np.ndarray | np.float32) -> np.ndarray:
    shifted = j_ref * (np.asarray(j_axis / j_ref, np.float64) ** np.asarray(inv_gamma, np.float64)).astype(np.float32)
    return shifted * m_max / (j_max - slope * m_max)


def _boundary_m(cusp_j: np.ndarray, cusp_m: np.ndarray, limit_j_max: np.float32, top_inv: np.ndarray,
                bottom_inv: np.float32, j_source: np.ndarray, slope: np.ndarray, j_cusp: np.ndarray) -> np.ndarray:
    """OCIO's find_gamut_boundary_intersection: lower and upper hull estimates joined by a smooth minimum."""
    lower = _line_boundary_m(j_source, slope, bottom_inv, cusp_j, cusp_m, j_cusp)
    upper = _line_boundary_m(limit_j_max - j_source, -slope, top_inv, limit_j_max - cusp_j, cusp_m,
                             limit_j_max - j_cusp)
    s = f32(SMOOTH_CUSPS) * cusp_m
    h = np.maximum(s - np.abs(lower - upper), f32(0.0)) / s
    return np.minimum(lower, upper) - h * h * h * s * (f32(1.0) / f32(6.0))


def _upper_hull_gamma(hues: np.ndarray, cusp: np.ndarray, peak: np.float32, limit_j_max: np.float32,
                      mid_j: np.float32, focus_dist: np.float32, lower_gamma_inv: np.float32, lim: _Jmh) -> np.ndarray:
    """Per hue, the smallest upper-hull gamma (steps of 0.4 then bisection to 1e-5) whose boundary estimate
    lies outside the limiting gamut at five test J; stored as 1 / gamma."""
    hue, cusp_j, cusp_m = hues[1:1 + NOMINAL], cusp[1:1 + NOMINAL, 0], cusp[1:1 + NOMINAL, 1]
    threshold = _lerp(cusp_j, limit_j_max, f32(FOCUS_GAIN_BLEND))
    focus_j = _lerp(cusp_j, mid_j, np.minimum(f32(1.0), f32(CUSP_MID_BLEND) - (cusp_j / limit_j_max)))
    tests = []
    for pos in (0.01, 0.1, 0.5, 0.8, 0.99):
        test_j = _lerp(cusp_j, limit_j_max, f32(pos))
        gain = _focus_gain(test_j, threshold, limit_j_max, focus_dist)
        j_source = _solve_j_intersect(test_j, cusp_m, focus_j, limit_j_max, gain)
        scaler = np.where(j_source < focus_j, j_source, limit_j_max - j_source)
        slope = scaler * (j_source - focus_j) / (focus_j * gain)
        tests.append((j_source, slope, _solve_j_intersect(cusp_j, cusp_m, focus_j, limit_j_max, gain)))
    luminance_limit = peak / f32(REFERENCE_LUMINANCE)

    def fits(gamma: np.ndarray) -> np.ndarray:
        ok = np.ones(NOMINAL, bool)
        for j_source, slope, j_cusp in tests:
            m = _boundary_m(cusp_j, cusp_m, limit_j_max, f32(1.0) / gamma, lower_gamma_inv, j_source, slope, j_cusp)
            ok &= (lim.rgb(np.stack([j_source + slope * m, m, hue], axis=1)) > luminance_limit).any(axis=1)
        return ok

    return _wrap(f32(1.0) / _first_true(fits, f32(0.4), f32(5.0), f32(1e-5)))


def _first_true(predicate: Any, step: np.float32, limit: np.float32, precision: float) -> np.ndarray:
    """Per hue, where `predicate` turns true, as OCIO searches: steps of `step` while under `limit`, then
    halving the last step until it is within `precision`."""
    low, high = np.zeros(NOMINAL, np.float32), np.full(NOMINAL, step, np.float32)
    searching = np.ones(NOMINAL, bool)
    while (busy := searching & (high < limit)).any():
        hit = predicate(high)
        searching &= ~(busy & hit)
        move = busy & ~hit
        low, high = np.where(move, high, low), np.where(move, high + step, high)
    while (busy := (high - low) > precision).any():
        mid = (high + low) / f32(2.0)
        hit = predicate(mid)
        high, low = np.where(busy & hit, mid, high), np.where(busy & ~hit, mid, low)
    return high
