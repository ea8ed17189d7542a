"""Per-channel 1D LUT with linear interpolation; inputs clamp to the domain, NaN takes the first entry."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, bits_float, float_bits, load_rgb, store_rgb
from oxi_cli.jit import F32, I64, kernel, serial
from oxi_cli.ops.codes import LUT1D, LUT1D_HALF

ZERO, ONE = np.float32(0.0), np.float32(1.0)
HALF_MAX_BITS = 0x7BFF
TWO_23 = np.float32(8388608.0)


@serial
def lut_index(x, lo, scale, top):
    """Continuous table index of x, clamped to [0, top]; NaN maps to 0 (shared with the 3D LUT)."""
    idx = (x - lo) * scale
    if not idx > ZERO:
        return ZERO
    return top if idx > top else idx


@serial
def _channel(x, c, p, o, t, to, n):
    idx = lut_index(x, p[o + c], p[o + 3 + c], np.float32(n - 1))
    i0 = int(idx)
    i1 = min(i0 + 1, n - 1)
    v0 = t[to + i0 * 3 + c]
    return v0 + (idx - np.float32(i0)) * (t[to + i1 * 3 + c] - v0)


@serial
def lut1d(r, g, b, p, o, t, to, n):
    """p[o:o+6] = domain min RGB, index scale RGB; t[to:] holds n rows of RGB."""
    return _channel(r, 0, p, o, t, to, n), _channel(g, 1, p, o, t, to, n), _channel(b, 2, p, o, t, to, n)


@serial
def half_bits(x):
    """float32 -> the nearest half's bit pattern (ties to even; beyond 65504 rounds to Inf; NaN stays NaN),
    in integers so no half hardware or runtime helper is needed."""
    u = float_bits(x)
    sign = (u >> 16) & 0x8000
    a = u & 0x7FFFFFFF
    if a >= 0x7F800000:  # Inf, or NaN keeping its top payload bits and made quiet (as Imath's half)
        return sign | 0x7C00 | (((a >> 13) & 0x3FF) | 0x200 if a > 0x7F800000 else 0)
    if a >= 0x477FF000:  # 65520 and above round to Inf
        return sign | 0x7C00
    if a < 0x38800000:  # below 2^-14: a subnormal half, exactly |x| * 2^24 rounded to an integer
        # Adding then taking 2**23 rounds a float32 below 2**22 to an integer, ties to even (as np.rint, which
        # the CUDA backend's compile of this function lacks).
        return sign | int((bits_float(a) * np.float32(16777216.0) + TWO_23) - TWO_23)
    h = (((a >> 23) - 112) << 10) | ((a >> 13) & 0x3FF)
    rest = a & 0x1FFF
    if rest > 0x1000 or (rest == 0x1000 and (h & 1) == 1):
        h += 1
    return sign | h


@serial
def half_value(h):
    """A half's bit pattern -> its float32 value, exactly."""
    sign = (h & 0x8000) << 16
    e, m = (h >> 10) & 0x1F, h & 0x3FF
    if e == 0:
        v = np.float32(m) * np.float32(5.9604644775390625e-08)  # m * 2^-24
        return -v if sign else v
    if e == 31:
        return bits_float(np.uint32(sign | 0x7F800000 | (m << 13)))
    return bits_float(np.uint32(sign | ((e + 112) << 23) | (m << 13)))


@serial
def _half_channel(x, c, t, to):
    """OCIO's half-code 1D LUT renderer: interpolate between the two half values around x (Inf inputs and
    steps to Inf are held at +-HALF_MAX); a NaN fraction counts as 0."""
    h = half_bits(x)
    if (h & 0x7FFF) == 0x7C00:
        h = (h & 0x8000) | HALF_MAX_BITS
        x = half_value(h)
    f = half_value(h)
    if abs(f) > abs(x):
        hb, ha = h, h - 1
    else:
        ha, hb = h, h + 1
        if (hb & 0x7FFF) == 0x7C00:
            hb = (hb & 0x8000) | HALF_MAX_BITS
            x = half_value(hb)
    fa, fb = half_value(ha), half_value(hb)
    frac = (x - fa) / (fb - fa)
    if frac != frac:
        frac = ZERO
    va, vb = t[to + ha * 3 + c], t[to + hb * 3 + c]
    return (va - vb) * (ONE - frac) + vb  # OCIO's lerpf(vb, va, 1 - frac), summed in its order


@serial
def lut1d_half(r, g, b, p, o, t, to, n):
    """t[to:] holds 65536 rows of RGB, one per half bit pattern."""
    return _half_channel(r, 0, t, to), _half_channel(g, 1, t, to), _half_channel(b, 2, t, to)


@kernel
def lut1d_half_block(r_in, g_in, b_in, r_out, g_out, b_out, t):
    """A half-domain 1D LUT over flat planes, float32 or half bits, in == out allowed."""
    for i in range(r_in.shape[0]):
        r, g, b = load_rgb(r_in, g_in, b_in, i)
        store_rgb(r_out, g_out, b_out, i, lut1d_half(r, g, b, t, 0, t, 0, 0))


@kernel
def lut1d_block(r_in, g_in, b_in, r_out, g_out, b_out, p, t, n):
    """A 1D LUT over flat planes, float32 or half bits, in == out allowed; p and t as lut1d's at offset 0."""
    for i in range(r_in.shape[0]):
        r, g, b = load_rgb(r_in, g_in, b_in, i)
        store_rgb(r_out, g_out, b_out, i, lut1d(r, g, b, p, 0, t, 0, n))


# Every chain runs this op through this loop (kernels/color.py), keyed by op code.
LONE = {
    LUT1D: lambda r, g, b, a, ro, go, bo, ao, p, t, n: lut1d_block(r, g, b, ro, go, bo, p, t, n),
    LUT1D_HALF: lambda r, g, b, a, ro, go, bo, ao, p, t, n: lut1d_half_block(r, g, b, ro, go, bo, t),
}
FORMS = [form for x in PLANE_FORMS for form in ((lut1d_block, (*(x,) * 6, F32, F32, I64)),
                                                (lut1d_half_block, (*(x,) * 6, F32)))]
