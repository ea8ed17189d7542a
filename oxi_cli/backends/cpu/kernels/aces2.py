"""ACES 2.0 output transform in float32, OCIO's order of operations (ACES2/Transform.cpp), in vectorised stages."""

# Pixels go BLOCK at a time through loops over float32 scratch rows: the maths up to the tone-mapped J, then
# hue, its cos and sin and the hue table's rows (scalar: libm's atan2f, sinf, cosf and log10f, as OCIO calls
# them; correctly rounded ones differ from glibc's for 1-14% of arguments, and OCIO's results with them), then
# chroma and gamut compression to RGB. The first and last hold the 17 powf calls of a pixel, as kernels/mathf.py's
# inline pow, and no branch (every `if` is a select: each pixel computes every path and keeps the one OCIO's
# branches take), so LLVM runs them 8 float32 or 4 float64 pixels at a time. The stages loop over the scratch's
# columns, not BLOCK: the CUDA backend runs them on one pixel's scratch a thread (backends/cuda/kernels.py).

import math

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, load_rgb, store_rgb
from oxi_cli.backends.cpu.kernels.mathf import pow_f32
from oxi_cli.jit import F32 as F32_PLANE
from oxi_cli.jit import serial, vector_kernel
from oxi_cli.ops.codes import ACES2_OUTPUT

F = np.float32
ZERO, ONE, HALF, TWO, FOUR = F(0.0), F(1.0), F(0.5), F(2.0), F(4.0)
NAN = F(np.nan)
PI = F(3.14159265358979)
DEG_180, DEG_360 = F(180.0), F(360.0)
NL_OFFSET = F(F(0.2713) * F(100.0))  # cam_nl_offset, as OCIO's constexpr float product
NL_POWER, NL_POWER_INV = F(0.42), F(ONE / F(0.42))
RA_MAX = F(0.99)
J_SCALE, INV_J_SCALE = F(100.0), F(ONE / F(100.0))
TOE_K2_MIN, LIMIT_MARGIN, GAIN_FLOOR = F(0.001), F(0.001), F(0.0001)
CUSP_MID_BLEND, FOCUS_GAIN_BLEND = F(1.3), F(0.3)
SMOOTH_CUSPS, SIXTH = F(0.12), F(ONE / F(6.0))
COMPRESSION_THRESHOLD = F(0.75)
# chroma_compress_norm's weights: cos h, cos 2h, cos 3h, sin h, sin 2h, sin 3h, constant.
W_C1, W_C2, W_C3 = F(11.34072), F(16.46899), F(7.88380)
W_S1, W_S2, W_S3, W_0 = F(14.66441), F(-6.37224), F(9.19364), F(77.12896)
THREE = F(3.0)
# Parameter offsets (ops/aces2.py PARAM_NAMES) and the table's row width and columns.
RGB_TO_CAM, CONE_TO_AAB, AAB_TO_CONE, CAM_TO_RGB = 0, 9, 18, 27
CZ, INV_CZ, A_W_J, INV_A_W_J, F_L_N = 36, 37, 38, 39, 40
S_2, M_2, G, T_1, N_R, LIMIT_J_MAX = 41, 42, 43, 44, 45, 46
SAT, SAT_THR, COMPR, CHROMA_SCALE = 47, 48, 49, 50
MID_J, FOCUS_DIST, LOWER_GAMMA_INV, SEARCH_LO, SEARCH_HI = 51, 52, 53, 54, 55
ROW, HUE, CUSP_J, CUSP_M, GAMMA_TOP_INV, REACH_M = 5, 0, 1, 2, 3, 4
UPPER_WRAP = 361
# Pixels a block: the scratch (16 rows of float32, 16 KiB) stays in L1.
BLOCK = 256
# Scratch rows: RGB in and out, what the first loop hands the others, then the hue loop's.
S_R, S_G, S_B, S_STATE, S_A, S_BB, S_J, S_M, S_J_TS = range(9)
H_COS, H_SIN, H_REACH_M, H_CUSP_J, H_CUSP_M, H_GAMMA_TOP_INV, H_GAIN = range(9, 16)
ROWS = 16
# S_STATE: the pixel's outcome before compression (OCIO's early returns).
LIVE, BLACK, INVALID = F(0.0), F(1.0), F(2.0)


@serial
def _max(a, b):
    return b if a < b else a  # std::max(a, b): NaN in b loses


@serial
def _min(a, b):
    return b if b < a else a  # std::min(a, b)


@serial
def _lerp(a, b, z):
    return (b - a) * z + a  # OCIO's lerpf


@serial
def _mat(p, o, x, y, z):
    return (
        x * p[o] + y * p[o + 1] + z * p[o + 2],
        x * p[o + 3] + y * p[o + 4] + z * p[o + 5],
        x * p[o + 6] + y * p[o + 7] + z * p[o + 8],
    )


@serial
def _compress(v):
    """Post-adaptation cone response compression of |v|, sign restored."""
    f = pow_f32(abs(v), NL_POWER)
    return math.copysign(f / (NL_OFFSET + f), v)


@serial
def _uncompress_abs(ra):
    ra = _min(ra, RA_MAX)
    return pow_f32(NL_OFFSET * ra / (ONE - ra), NL_POWER_INV)


@serial
def _toe(x, limit, k1_in, k2_in):
    k2 = _max(k2_in, TOE_K2_MIN)
    k1 = math.sqrt(k1_in * k1_in + k2 * k2)
    k3 = (limit + k1) / (limit + k2)
    minus_b = k3 * x - k1
    minus_ac = k2 * k3 * x
    toed = HALF * (minus_b + math.sqrt(minus_b * minus_b + FOUR * minus_ac))
    return x if x > limit else toed


@serial
def _tonescale_j(a, p, o):
    """Tone-mapped J of an achromatic response a > 0: to luminance, OCIO's tone curve, back to J."""
    y = _uncompress_abs(p[o + A_W_J] * a) / p[o + F_L_N]
    f = p[o + M_2] * pow_f32(y / (y + p[o + S_2]), p[o + G])
    y_ts = _max(ZERO, f * f / (f + p[o + T_1])) * p[o + N_R]
    fly = pow_f32(y_ts * p[o + F_L_N], NL_POWER)
    return J_SCALE * pow_f32((fly / (NL_OFFSET + fly)) * p[o + INV_A_W_J], p[o + CZ])


@serial
def _chroma_compress(j, m, j_ts, m_norm, reach_m, p, o):
    inv_gamma = p[o + INV_CZ]
    nj = j_ts / p[o + LIMIT_J_MAX]
    snj = _max(ZERO, ONE - nj)
    limit = pow_f32(nj, inv_gamma) * reach_m / m_norm
    m_cp = m * pow_f32(j_ts / j, inv_gamma)
    m_cp = m_cp / m_norm
    m_cp = limit - _toe(limit - m_cp, limit - LIMIT_MARGIN, snj * p[o + SAT], math.sqrt(nj * nj + p[o + SAT_THR]))
    m_cp = _toe(m_cp, limit, nj * p[o + COMPR], snj)
    return m if m == ZERO else m_cp * m_norm


@serial
def _hue_interval(h, t, to, lo, hi):
    """Upper index of the hue-table interval holding h, searched from h's whole-degree row (OCIO's
    lookup_hue_interval: the table is nearly uniform, so the search spans a few rows)."""
    i = 1 + int(h)
    i_lo = max(0, i + lo)
    i_hi = min(UPPER_WRAP, i + hi)
    while i_lo + 1 < i_hi:
        if h > t[to + i * ROW + HUE]:
            i_lo = i
        else:
            i_hi = i
        i = (i_lo + i_hi) // 2
    return max(1, i_hi)


@serial
def _solve_j_intersect(j, m, focus_j, max_j, gain):
    m_scaled = m / gain
    a = m_scaled / focus_j
    b_below = ONE - m_scaled
    c_below = -j
    below = -TWO * c_below / (b_below + math.sqrt(b_below * b_below - FOUR * a * c_below))
    b = -(ONE + m_scaled + max_j * a)
    c = max_j * m_scaled + j
    above = -TWO * c / (b - math.sqrt(b * b - FOUR * a * c))
    return below if j < focus_j else above


@serial
def _line_boundary_m(j_axis, slope, inv_gamma, j_max, m_max, j_ref):
    """Where the line J = slope * M + j_axis meets the hull J = j_max * (M / m_max) ** (1 / inv_gamma),
    estimated through a shifted straight line as OCIO does."""
    shifted = j_ref * pow_f32(j_axis / j_ref, inv_gamma)
    return shifted * m_max / (j_max - slope * m_max)


@serial
def _focus_gain(j, cusp_j, p, o):
    """The focus point's gain for tone-mapped J and the cusp's J at its hue (a log10 for J above the cusp)."""
    limit_j = p[o + LIMIT_J_MAX]
    threshold = _lerp(cusp_j, limit_j, FOCUS_GAIN_BLEND)
    gain = limit_j * p[o + FOCUS_DIST]
    if j > threshold:
        adjust = math.log10((limit_j - threshold) / _max(GAIN_FLOOR, limit_j - j))
        gain = gain * (adjust * adjust + ONE)
    return gain


@serial
def _gamut_compress(j, m, cusp_j, cusp_m, gamma_top_inv, gain, reach_m, p, o):
    """Compressed (J, M) of a tone-mapped colour, towards the limiting gamut's hull (cusp, upper gamma and
    focus gain at its hue)."""
    limit_j = p[o + LIMIT_J_MAX]
    focus_j = _lerp(cusp_j, p[o + MID_J], _min(ONE, CUSP_MID_BLEND - (cusp_j / limit_j)))
    j_source = _solve_j_intersect(j, m, focus_j, limit_j, gain)
    scaler = j_source if j_source < focus_j else limit_j - j_source
    slope = scaler * (j_source - focus_j) / (focus_j * gain)
    j_cusp = _solve_j_intersect(cusp_j, cusp_m, focus_j, limit_j, gain)

    lower = _line_boundary_m(j_source, slope, p[o + LOWER_GAMMA_INV], cusp_j, cusp_m, j_cusp)
    upper = _line_boundary_m(limit_j - j_source, -slope, gamma_top_inv, limit_j - cusp_j, cusp_m, limit_j - j_cusp)
    s = SMOOTH_CUSPS * cusp_m
    k = _max(s - abs(lower - upper), ZERO) / s
    boundary = min(lower, upper) - k * k * k * s * SIXTH

    reach = _line_boundary_m(j_source, slope, p[o + INV_CZ], limit_j, reach_m, limit_j)
    proportion = _max(boundary / reach, COMPRESSION_THRESHOLD)
    threshold_m = proportion * boundary
    # Reinhard curve from the threshold: the gamut boundary maps to itself, the reach boundary to infinity.
    reach_offset = reach - threshold_m
    scale = reach_offset / ((reach_offset / (boundary - threshold_m)) - ONE)
    nd = (m - threshold_m) / scale
    remapped = threshold_m + scale * nd / (ONE + nd)
    m_out = m if (m <= threshold_m) | (proportion >= ONE) else remapped
    # OCIO's early returns, last first: no compression (J kept, M 0) outside the hull's J range, M or hull empty.
    j_out = j_source + m_out * slope
    keep = (m <= ZERO) | (j > limit_j) | (boundary <= ZERO)
    j_out = j if keep else j_out
    m_out = ZERO if keep else m_out
    return (ZERO if j <= ZERO else j_out), (ZERO if j <= ZERO else m_out)


@serial
def _to_cam(s, p, o):
    """Scratch RGB (ACES AP0) to the pixel's state, a and b, J, M and tone-mapped J. NaN or Inf in gives
    INVALID (OCIO's renderer: no hue, no table row), A <= 0 BLACK."""
    for i in range(s.shape[1]):
        c0, c1, c2 = _mat(p, o + RGB_TO_CAM, s[S_R, i], s[S_G, i], s[S_B, i])
        big_a, a, bb = _mat(p, o + CONE_TO_AAB, _compress(c0), _compress(c1), _compress(c2))
        invalid = (big_a != big_a) | (a != a) | (bb != bb)
        s[S_STATE, i] = INVALID if invalid else (BLACK if big_a <= ZERO else LIVE)
        s[S_A, i] = a
        s[S_BB, i] = bb
        s[S_J, i] = J_SCALE * pow_f32(big_a, p[o + CZ])
        s[S_M, i] = math.sqrt(a * a + bb * bb)
        s[S_J_TS, i] = _tonescale_j(big_a, p, o)


@serial
def _hue_rows(s, p, o, t, to):
    """The hue's cos and sin, reach M, the limiting gamut's cusp J, M and upper hull gamma there, and the
    focus gain; any hue for pixels that are not LIVE."""
    lo_step, hi_step = int(p[o + SEARCH_LO]), int(p[o + SEARCH_HI])
    for i in range(s.shape[1]):
        h = ZERO
        if s[S_STATE, i] == LIVE:
            h = DEG_180 * math.atan2(s[S_BB, i], s[S_A, i]) / PI
            if h < ZERO:
                h = h + DEG_360
        h_rad = PI * h / DEG_180
        s[H_COS, i], s[H_SIN, i] = math.cos(h_rad), math.sin(h_rad)
        base = int(h)
        s[H_REACH_M, i] = _lerp(t[to + (base + 1) * ROW + REACH_M], t[to + (base + 2) * ROW + REACH_M], h - F(base))
        k = _hue_interval(h, t, to, lo_step, hi_step)
        lo, hi = to + (k - 1) * ROW, to + k * ROW
        w = (h - t[lo + HUE]) / (t[hi + HUE] - t[lo + HUE])
        cusp_j = _lerp(t[lo + CUSP_J], t[hi + CUSP_J], w)
        s[H_CUSP_J, i] = cusp_j
        s[H_CUSP_M, i] = _lerp(t[lo + CUSP_M], t[hi + CUSP_M], w)
        s[H_GAMMA_TOP_INV, i] = _lerp(t[lo + GAMMA_TOP_INV], t[hi + GAMMA_TOP_INV], w)
        s[H_GAIN, i] = _focus_gain(s[S_J_TS, i], cusp_j, p, o)


@serial
def _to_rgb(s, p, o):
    """Chroma and gamut compression, then back to display-linear RGB of the limiting gamut, into scratch RGB."""
    for i in range(s.shape[1]):
        cos1, sin1 = s[H_COS, i], s[H_SIN, i]
        cos2 = TWO * cos1 * cos1 - ONE
        sin2 = TWO * cos1 * sin1
        cos3 = FOUR * cos1 * cos1 * cos1 - THREE * cos1
        sin3 = THREE * sin1 - FOUR * sin1 * sin1 * sin1
        m_norm = (W_C1 * cos1 + W_C2 * cos2 + W_C3 * cos3 + W_S1 * sin1 + W_S2 * sin2 + W_S3 * sin3 + W_0) * p[
            o + CHROMA_SCALE]
        reach_m, j_ts = s[H_REACH_M, i], s[S_J_TS, i]
        m_cp = _chroma_compress(s[S_J, i], s[S_M, i], j_ts, m_norm, reach_m, p, o)
        j_out, m_out = _gamut_compress(j_ts, m_cp, s[H_CUSP_J, i], s[H_CUSP_M, i], s[H_GAMMA_TOP_INV, i],
                                       s[H_GAIN, i], reach_m, p, o)
        a_out = pow_f32(j_out * INV_J_SCALE, p[o + INV_CZ])
        r_a, g_a, b_a = _mat(p, o + AAB_TO_CONE, a_out, m_out * cos1, m_out * sin1)
        r_m = math.copysign(_uncompress_abs(abs(r_a)), r_a)
        g_m = math.copysign(_uncompress_abs(abs(g_a)), g_a)
        b_m = math.copysign(_uncompress_abs(abs(b_a)), b_a)
        r, g, b = _mat(p, o + CAM_TO_RGB, r_m, g_m, b_m)
        state = s[S_STATE, i]
        black = ZERO if state == BLACK else NAN
        s[S_R, i] = r if state == LIVE else black
        s[S_G, i] = g if state == LIVE else black
        s[S_B, i] = b if state == LIVE else black


@vector_kernel
def aces2_block(r_in, g_in, b_in, r_out, g_out, b_out, p, t):
    """The ACES 2.0 output transform over flat planes, float32 or half bits, in == out allowed. p holds
    ops/aces2.py's PARAM_NAMES, t its (363, 5) table."""
    n = r_in.shape[0]
    s = np.empty((ROWS, BLOCK), F)
    for start in range(0, n, BLOCK):
        count = min(BLOCK, n - start)
        rs, gs, bs = r_in[start : start + count], g_in[start : start + count], b_in[start : start + count]
        for i in range(count):
            s[S_R, i], s[S_G, i], s[S_B, i] = load_rgb(rs, gs, bs, i)
        for i in range(count, BLOCK):  # a short last block repeats its first pixel: full loops vectorise
            s[S_R, i], s[S_G, i], s[S_B, i] = s[S_R, 0], s[S_G, 0], s[S_B, 0]
        _to_cam(s, p, 0)
        _hue_rows(s, p, 0, t, 0)
        _to_rgb(s, p, 0)
        ro, go, bo = r_out[start : start + count], g_out[start : start + count], b_out[start : start + count]
        for i in range(count):
            store_rgb(ro, go, bo, i, (s[S_R, i], s[S_G, i], s[S_B, i]))


# A chain runs this op through this loop (kernels/color.py), keyed by op code.
LONE = {ACES2_OUTPUT: lambda r, g, b, a, ro, go, bo, ao, p, t, n: aces2_block(r, g, b, ro, go, bo, p, t)}
FORMS = [(aces2_block, (*(x,) * 6, F32_PLANE, F32_PLANE)) for x in PLANE_FORMS]
