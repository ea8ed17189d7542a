"""The ACES 2.0 output transform (OCIO's FixedFunction ACES2_OutputTransform): ACES AP0 to display-linear RGB."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded, check_finite
from oxi_cli.ops.codes import ACES2_OUTPUT

# The maths follows OpenColorIO's ops/fixedfunction/ACES2 (Transform.cpp, Common.h): a CAM16-like
# J, M, h model, a tone scale on J, chroma compression towards the reach gamut (AP1) and gamut compression
# into the limiting gamut. The per-pixel kernels (backends/cpu/kernels/aces2.py, wgsl/aces2.wgsl) get the
# constants below as parameters and the hue-indexed tables OCIO builds, computed here the way OCIO computes
# them (in double; OCIO's float32 tables agree to ~1e-6).

Primaries = tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]

AP0: Primaries = ((0.7347, 0.2653), (0.0, 1.0), (0.0001, -0.077), (0.32168, 0.33767))
AP1: Primaries = ((0.713, 0.293), (0.165, 0.830), (0.128, 0.044), (0.32168, 0.33767))
CAM16: Primaries = ((0.8336, 0.1735), (2.3854, -1.4659), (0.087, -0.125), (0.333, 0.333))

PI = float(np.float32(3.14159265358979))  # OCIO's float PI: hues go through it in both directions
REFERENCE_LUMINANCE = 100.0
L_A, Y_B = 100.0, 20.0
SURROUND = (0.9, 0.59, 0.9)
CAM_NL_OFFSET, CAM_NL_SCALE = 0.2713 * 100.0, 4.0 * 100.0
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
    encodes_output: ClassVar[bool] = True

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
    as OCIO's Renderer_ACES_OutputTransform20 sets them up (read-only arrays: they are cached)."""
    lim_prims: Primaries = tuple(  # type: ignore[assignment]
        (float(np.float32(limiting[2 * i])), float(np.float32(limiting[2 * i + 1]))) for i in range(4)
    )
    peak = float(np.float32(peak))
    p_in, p_lim, reach = _Jmh(AP0), _Jmh(lim_prims), _Jmh(AP1)
    ts = _ToneScale(peak)
    limit_j_max = p_in.y_to_j(peak)
    reach_m = _reach_m_table(reach, limit_j_max)
    log_peak = ts.log_peak
    sat = max(0.2, CHROMA_EXPAND - CHROMA_EXPAND * CHROMA_EXPAND_FACT * log_peak)
    sat_thr = CHROMA_EXPAND_THR / peak
    compr = CHROMA_COMPRESS + CHROMA_COMPRESS * CHROMA_COMPRESS_FACT * log_peak
    chroma_scale = (0.03379 * peak) ** 0.30596 - 0.45135
    mid_j = p_in.y_to_j(ts.c_t * REFERENCE_LUMINANCE)
    focus_dist = FOCUS_DISTANCE + FOCUS_DISTANCE * FOCUS_DISTANCE_SCALING * log_peak
    lower_gamma_inv = 1.0 / (1.14 + 0.07 * log_peak)
    hues, cusp = _cusp_table(reach, p_lim, peak, ts.forward_limit, limit_j_max)
    search = _hue_search_range(hues)
    gamma_inv = _upper_hull_gamma(hues, cusp, peak, limit_j_max, mid_j, focus_dist, lower_gamma_inv, p_lim)
    params = np.array([
        *p_in.rgb_to_cam.ravel(), *p_in.cone_to_aab.ravel(), *p_lim.aab_to_cone.ravel(), *p_lim.cam_to_rgb.ravel(),
        p_in.cz, p_in.inv_cz, p_in.a_w_j, 1.0 / p_in.a_w_j, p_in.f_l_n,
        ts.s_2, ts.m_2, ts.g, ts.t_1, ts.n_r, limit_j_max,
        sat, sat_thr, compr, chroma_scale,
        mid_j, focus_dist, lower_gamma_inv, *search,
    ], np.float32)
    assert params.size == len(PARAM_NAMES)
    table = np.stack([hues, cusp[:, 0], cusp[:, 1], gamma_inv, reach_m], axis=1).astype(np.float32)
    params.setflags(write=False)
    table.setflags(write=False)
    return params, table


def _npm(prims: Primaries) -> np.ndarray:
    """RGB -> XYZ of a set of primaries and white (Y of white = 1), no chromatic adaptation."""
    xy = np.asarray(prims, np.float64)
    xyz = np.stack([xy[:, 0], xy[:, 1], 1.0 - xy[:, 0] - xy[:, 1]])  # columns: R, G, B, W
    white = xyz[:, 3] / xyz[1, 3]
    return xyz[:, :3] * np.linalg.solve(xyz[:, :3], white)


def _compress(x: np.ndarray) -> np.ndarray:
    """CAM16's post-adaptation cone response compression, odd in x."""
    f = np.abs(x) ** 0.42
    return np.copysign(f / (CAM_NL_OFFSET + f), x)


def _compress_inv(x: np.ndarray) -> np.ndarray:
    ra = np.minimum(np.abs(x), 0.99)
    return np.copysign((CAM_NL_OFFSET * ra / (1.0 - ra)) ** (1.0 / 0.42), x)


def _model_gamma() -> float:
    return SURROUND[1] * (1.48 + np.sqrt(Y_B / REFERENCE_LUMINANCE))


class _Jmh:
    """OCIO's JMhParams for one set of primaries, with the conversions the tables need (rows of RGB/JMh)."""

    def __init__(self, prims: Primaries) -> None:
        base = np.array([[2.0, 1.0, 1.0 / 20.0], [1.0, -12.0 / 11.0, 1.0 / 11.0], [1.0 / 9.0, 1.0 / 9.0, -2.0 / 9.0]])
        to_cam16 = np.linalg.inv(_npm(CAM16))
        xyz_w = _npm(prims) @ np.full(3, REFERENCE_LUMINANCE)
        rgb_w = to_cam16 @ xyz_w
        k4 = (1.0 / (5.0 * L_A + 1.0)) ** 4
        f_l = 0.2 * k4 * (5.0 * L_A) + 0.1 * (1.0 - k4) ** 2 * (5.0 * L_A) ** (1.0 / 3.0)
        self.f_l_n = f_l / REFERENCE_LUMINANCE
        self.cz = _model_gamma()
        self.inv_cz = 1.0 / self.cz
        d_rgb = self.f_l_n * xyz_w[1] / rgb_w
        cone_to_aab = CAM_NL_SCALE * base
        a_w = cone_to_aab[0] @ _compress(d_rgb * rgb_w)
        self.a_w_j = float(_compress(np.float64(f_l)))
        self.rgb_to_cam = np.diag(d_rgb) @ (to_cam16 @ _npm(prims) * REFERENCE_LUMINANCE)
        self.cam_to_rgb = np.linalg.inv(self.rgb_to_cam)
        self.cone_to_aab = cone_to_aab * np.array([[1.0 / a_w], [43.0 * SURROUND[2]], [43.0 * SURROUND[2]]])
        self.aab_to_cone = np.linalg.inv(self.cone_to_aab)

    def y_to_j(self, y: float) -> float:
        ra = _compress(np.float64(abs(y) * self.f_l_n))
        return float(np.copysign(100.0 * (ra / self.a_w_j) ** self.cz, y))

    def aab(self, rgb: np.ndarray) -> np.ndarray:
        return _compress(rgb @ self.rgb_to_cam.T) @ self.cone_to_aab.T

    def jmh(self, rgb: np.ndarray) -> np.ndarray:
        """RGB rows -> J, M, h (degrees in [0, 360)); A <= 0 gives 0, 0, 0 as OCIO's Aab_to_JMh."""
        aab = self.aab(rgb)
        a = np.maximum(aab[:, 0], 0.0)
        h = 180.0 * np.arctan2(aab[:, 2], aab[:, 1]) / PI
        h = np.where(h < 0.0, h + 360.0, h)
        out = np.stack([100.0 * a**self.cz, np.hypot(aab[:, 1], aab[:, 2]), h], axis=1)
        return np.where((aab[:, :1] > 0.0), out, 0.0)

    def rgb(self, jmh: np.ndarray) -> np.ndarray:
        h = PI * jmh[:, 2] / 180.0
        aab = np.stack([(jmh[:, 0] / 100.0) ** self.inv_cz, jmh[:, 1] * np.cos(h), jmh[:, 1] * np.sin(h)], axis=1)
        return _compress_inv(aab @ self.aab_to_cone.T) @ self.cam_to_rgb.T


class _ToneScale:
    """OCIO's init_ToneScaleParams: the Daniele Siragusano tone curve for a peak luminance in nits."""

    def __init__(self, peak: float) -> None:
        n, self.n_r, self.g, self.t_1 = peak, 100.0, 1.15, 0.04
        c, c_d, w_g, r_hit_min, r_hit_max = 0.18, 10.013, 0.14, 128.0, 896.0
        r_hit = r_hit_min + (r_hit_max - r_hit_min) * (np.log(n / self.n_r) / np.log(10000.0 / 100.0))
        m_0 = n / self.n_r
        m_1 = 0.5 * (m_0 + np.sqrt(m_0 * (m_0 + 4.0 * self.t_1)))
        u = ((r_hit / m_1) / ((r_hit / m_1) + 1.0)) ** self.g
        m = m_1 / u
        w_i = np.log(n / 100.0) / np.log(2.0)
        self.c_t = c_d / self.n_r * (1.0 + w_i * w_g)
        g_ip = 0.5 * (self.c_t + np.sqrt(self.c_t * (self.c_t + 4.0 * self.t_1)))
        g_ipp2 = -(m_1 * (g_ip / m) ** (1.0 / self.g)) / ((g_ip / m) ** (1.0 / self.g) - 1.0)
        w_2 = c / g_ipp2
        self.s_2 = w_2 * m_1 * REFERENCE_LUMINANCE
        u_2 = ((r_hit / m_1) / ((r_hit / m_1) + w_2)) ** self.g
        self.m_2 = m_1 / u_2
        self.forward_limit = 8.0 * r_hit
        self.log_peak = float(np.log10(n / self.n_r))


def _wrap(nominal: np.ndarray, shift: float = 0.0) -> np.ndarray:
    """A table's 360 nominal rows with OCIO's wrap rows: the last one first, the first two last (+ shift)."""
    return np.concatenate([nominal[-1:] - shift, nominal, nominal[:2] + shift])


def _reach_m_table(reach: _Jmh, limit_j_max: float) -> np.ndarray:
    """Per whole degree, the largest M at J = limit_j_max still inside the reach gamut (AP1, no negative
    channel): OCIO's steps of 50 up to 1300, then bisection to 0.01."""
    hues = np.arange(NOMINAL, dtype=np.float64)

    def outside(m: np.ndarray) -> np.ndarray:
        jmh = np.stack([np.full_like(hues, limit_j_max), m, hues], axis=1)
        return (reach.rgb(jmh) < 0.0).any(axis=1)

    steps = np.arange(50.0, 1300.0, 50.0)
    out = np.stack([outside(np.full_like(hues, s)) for s in steps], axis=1)
    first = np.where(out.any(axis=1), out.argmax(axis=1), len(steps))
    high = np.where(first < len(steps), steps[np.minimum(first, len(steps) - 1)], 1300.0)
    low = np.where(first > 0, high - 50.0, 0.0)
    while (high - low > 1e-2).any():
        busy = high - low > 1e-2
        mid = (high + low) / 2.0
        o = outside(mid)
        high = np.where(busy & o, mid, high)
        low = np.where(busy & ~o, mid, low)
    return _wrap(high)


def _unit_corners() -> np.ndarray:
    """The cube's six cusp corners in hue order R, Y, G, C, B, M (OCIO's generate_unit_cube_cusp_corners)."""
    i = np.arange(6)
    return np.stack([((i + 1) % 6) < 3, ((i + 5) % 6) < 3, ((i + 3) % 6) < 3], axis=1).astype(np.float64)


def _cycle(rows: np.ndarray, start: int, hues: bool) -> np.ndarray:
    """Six corner rows rotated to start at `start` (the lowest hue) placed at [1], with [0] and [7] repeating
    the ends; for JMh rows the hues there are wrapped by 360 so the cycle's hues keep rising."""
    rot = np.roll(rows, -start, axis=0)
    cycle = np.concatenate([rot[-1:], rot, rot[:1]])
    if hues:
        cycle[0, 2] -= 360.0
        cycle[7, 2] += 360.0
    return cycle


def _reach_corners(reach: _Jmh, limit_j: float, maximum: float) -> np.ndarray:
    """JMh of the AP1 cube corners scaled until their J reaches limit_j (bisection on A to 1e-3)."""
    corners = _unit_corners()
    limit_a = (limit_j / 100.0) ** reach.inv_cz
    lower, upper = np.zeros(6), np.full(6, float(maximum))
    done = np.zeros(6, bool)
    while ((upper - lower) > 1e-3).any() and not done.all():
        busy = ((upper - lower) > 1e-3) & ~done
        test = (lower + upper) / 2.0
        a = reach.aab(test[:, None] * corners)[:, 0]
        lower = np.where(busy & (a < limit_a), test, lower)
        upper = np.where(busy & (a >= limit_a), test, upper)
        done |= busy & (a == limit_a)
    jmh = reach.jmh(upper[:, None] * corners)
    return _cycle(jmh, int(np.argmin(jmh[:, 2])), True)


def _build_hue_table(sorted_hues: list[float]) -> np.ndarray:
    """OCIO's build_hue_table: 360 hues as evenly spaced as possible with every corner hue among them."""
    spacing = NOMINAL / 360.0
    counts = [0] * (len(sorted_hues) + 2)
    last_idx = -1
    min_index = 0 if sorted_hues[0] == 0.0 else 1
    for k, hue in enumerate(sorted_hues):
        nominal = min(max(math.floor(hue * spacing + 0.5), min_index), NOMINAL - 1)  # std::round
        if last_idx == nominal:
            if k > 1 and counts[k - 2] != counts[k - 1] - 1:
                counts[k - 1] -= 1
            else:
                nominal += 1
        counts[k] = min(nominal, NOMINAL - 1)
        last_idx = min_index = nominal
    table = np.zeros(TABLE_ROWS)
    total = 0
    bounds = [0.0, *sorted_hues, 360.0]
    for k in range(len(sorted_hues) + 1):
        samples = counts[0] if k == 0 else (counts[k] - counts[k - 1] if k < len(sorted_hues) else NOMINAL - total)
        lo, hi = bounds[k], bounds[k + 1]
        table[1 + total: 1 + total + samples] = lo + np.arange(samples) * ((hi - lo) / max(samples, 1))
        total += samples
    return _wrap(table[1:1 + NOMINAL], 360.0)


def _cusp_table(reach: _Jmh, lim: _Jmh, peak: float, forward_limit: float,
                limit_j_max: float) -> tuple[np.ndarray, np.ndarray]:
    """The hue table and, at its hues, the limiting gamut's cusp J and M (M widened by the cusp smoothing)."""
    reach_jmh = _reach_corners(reach, limit_j_max, forward_limit)
    unit = _unit_corners() * (peak / REFERENCE_LUMINANCE)
    display = lim.jmh(unit)
    start = int(np.argmin(display[:, 2]))
    rgb_corners, jmh_corners = _cycle(unit, start, False), _cycle(display, start, True)
    merged = sorted(set(reach_jmh[1:7, 2].tolist()) | set(jmh_corners[1:7, 2].tolist()))
    hues = _build_hue_table(merged)
    nominal = hues[1:1 + NOMINAL]
    # The corner segment each hue lies on: the first corner above it (from [1]; OCIO's default is 1).
    above = jmh_corners[1:, 2][None, :] > nominal[:, None]
    upper = np.where(above.any(axis=1), 1 + above.argmax(axis=1), 1)
    lower = upper - 1
    lo_t, hi_t = np.zeros(NOMINAL), np.ones(NOMINAL)
    h_lo, h_hi = jmh_corners[lower, 2], jmh_corners[upper, 2]
    while (hi_t - lo_t > 1e-7).any():
        busy = hi_t - lo_t > 1e-7
        t = (lo_t + hi_t) / 2.0
        h = lim.jmh(rgb_corners[lower] + t[:, None] * (rgb_corners[upper] - rgb_corners[lower]))[:, 2]
        go_down = (h < h_lo) | ((h < h_hi) & (h > nominal))
        hi_t = np.where(busy & go_down, t, hi_t)
        lo_t = np.where(busy & ~go_down, t, lo_t)
    t = (lo_t + hi_t) / 2.0
    jm = lim.jmh(rgb_corners[lower] + t[:, None] * (rgb_corners[upper] - rgb_corners[lower]))[:, :2]
    exact = jmh_corners[lower, 2] == nominal
    jm = np.where(exact[:, None], jmh_corners[lower, :2], jm)
    jm[:, 1] *= 1.0 + SMOOTH_M * SMOOTH_CUSPS
    return hues, np.stack([_wrap(jm[:, 0]), _wrap(jm[:, 1])], axis=1)


def _hue_search_range(hues: np.ndarray) -> tuple[int, int]:
    """How far (in rows) a hue's interval can lie from its whole-degree row: bounds the per-pixel search."""
    i = np.arange(1, 1 + NOMINAL)
    delta = i - (1 + hues[1:1 + NOMINAL].astype(np.int64))
    return min(0, int(delta.min())), max(1, int(delta.max()) + 1)


def _focus_gain(j: np.ndarray, threshold: np.ndarray, limit_j_max: float, focus_dist: float) -> np.ndarray:
    adjust = np.log10((limit_j_max - threshold) / np.maximum(0.0001, limit_j_max - j))
    return limit_j_max * focus_dist * np.where(j > threshold, adjust * adjust + 1.0, 1.0)


def _solve_j_intersect(j: np.ndarray, m: np.ndarray, focus_j: np.ndarray, max_j: float,
                       gain: np.ndarray) -> np.ndarray:
    m_scaled = m / gain
    a = m_scaled / focus_j
    b_lo = 1.0 - m_scaled
    below = -2.0 * -j / (b_lo + np.sqrt(b_lo * b_lo + 4.0 * a * j))
    b_hi = -(1.0 + m_scaled + max_j * a)
    c_hi = max_j * m_scaled + j
    above = -2.0 * c_hi / (b_hi - np.sqrt(b_hi * b_hi - 4.0 * a * c_hi))
    return np.where(j < focus_j, below, above)


def _line_boundary_m(j_axis: np.ndarray, slope: np.ndarray, inv_gamma: np.ndarray | float, j_max: np.ndarray | float,
                     m_max: np.ndarray, j_ref: np.ndarray | float) -> np.ndarray:
    shifted = j_ref * (j_axis / j_ref) ** inv_gamma
    return shifted * m_max / (j_max - slope * m_max)


def _boundary_m(cusp_j: np.ndarray, cusp_m: np.ndarray, limit_j_max: float, top_inv: np.ndarray,
                bottom_inv: float, j_source: np.ndarray, slope: np.ndarray, j_cusp: np.ndarray) -> np.ndarray:
    """OCIO's find_gamut_boundary_intersection: lower and upper hull estimates joined by a smooth minimum."""
    lower = _line_boundary_m(j_source, slope, bottom_inv, cusp_j, cusp_m, j_cusp)
    upper = _line_boundary_m(limit_j_max - j_source, -slope, top_inv, limit_j_max - cusp_j, cusp_m,
                             limit_j_max - j_cusp)
    s = SMOOTH_CUSPS * cusp_m
    h = np.maximum(s - np.abs(lower - upper), 0.0) / s
    return np.minimum(lower, upper) - h * h * h * s / 6.0


def _upper_hull_gamma(hues: np.ndarray, cusp: np.ndarray, peak: float, limit_j_max: float, mid_j: float,
                      focus_dist: float, lower_gamma_inv: float, lim: _Jmh) -> np.ndarray:
    """Per hue, the smallest upper-hull gamma (steps of 0.4 then bisection to 1e-5, in float32 as OCIO)
    whose boundary estimate lies outside the limiting gamut at five test J; stored as 1 / gamma."""
    hue, cusp_j, cusp_m = hues[1:1 + NOMINAL], cusp[1:1 + NOMINAL, 0], cusp[1:1 + NOMINAL, 1]
    threshold = cusp_j + FOCUS_GAIN_BLEND * (limit_j_max - cusp_j)
    focus_j = cusp_j + (mid_j - cusp_j) * np.minimum(1.0, CUSP_MID_BLEND - cusp_j / limit_j_max)
    tests = []
    for pos in (0.01, 0.1, 0.5, 0.8, 0.99):
        test_j = cusp_j + pos * (limit_j_max - cusp_j)
        gain = _focus_gain(test_j, threshold, limit_j_max, focus_dist)
        j_source = _solve_j_intersect(test_j, cusp_m, focus_j, limit_j_max, gain)
        scaler = np.where(j_source < focus_j, j_source, limit_j_max - j_source)
        slope = scaler * (j_source - focus_j) / (focus_j * gain)
        tests.append((j_source, slope, _solve_j_intersect(cusp_j, cusp_m, focus_j, limit_j_max, gain)))

    def fits(gamma: np.ndarray) -> np.ndarray:
        ok = np.ones(NOMINAL, bool)
        for j_source, slope, j_cusp in tests:
            m = _boundary_m(cusp_j, cusp_m, limit_j_max, 1.0 / gamma, lower_gamma_inv, j_source, slope, j_cusp)
            rgb = lim.rgb(np.stack([j_source + slope * m, m, hue], axis=1))
            ok &= (rgb > peak / REFERENCE_LUMINANCE).any(axis=1)
        return ok

    step = np.float32(0.4)
    low, high = np.zeros(NOMINAL, np.float32), np.full(NOMINAL, step, np.float32)
    searching = np.ones(NOMINAL, bool)
    while (searching & (high < 5.0)).any():
        busy = searching & (high < 5.0)
        found = fits(high.astype(np.float64))
        searching &= ~(busy & found)
        move = busy & ~found
        low = np.where(move, high, low)
        high = np.where(move, high + step, high).astype(np.float32)
    while ((high - low) > np.float32(1e-5)).any():
        busy = (high - low) > np.float32(1e-5)
        mid = ((high + low) / np.float32(2.0)).astype(np.float32)
        found = fits(mid.astype(np.float64))
        high = np.where(busy & found, mid, high).astype(np.float32)
        low = np.where(busy & ~found, mid, low).astype(np.float32)
    return _wrap(1.0 / high.astype(np.float64))
