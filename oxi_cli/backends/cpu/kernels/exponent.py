"""Power curves per pixel as OCIO's Gamma renderers (exact powf, the LOSSLESS path): basic with three
negative styles, and the moncurve (ExponentWithLinear) both ways, optionally mirrored."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import load_rgb, store_rgb
from oxi_cli.jit import kernel, prange, serial
from oxi_cli.ops.codes import EXPONENT, MONCURVE_FWD, MONCURVE_REV

ZERO = np.float32(0.0)


@serial
def _power(x, g, style):
    if style == 0:  # clamp: max(0, x) first, so NaN becomes 0 as std::max(0, NaN) does
        return (x if x > ZERO else ZERO) ** g
    if style == 1:  # mirror: sign(x) * |x| ** g
        v = abs(x) ** g
        return -v if x < ZERO else v
    return x ** g if x > ZERO else x  # pass: zero, negatives and NaN unchanged


@serial
def exponent(r, g, b, p, o):
    """p[o] = negative style (0 clamp, 1 mirror, 2 pass), p[o+1:o+4] = exponent RGB."""
    style = int(p[o])
    return _power(r, p[o + 1], style), _power(g, p[o + 2], style), _power(b, p[o + 3], style)


@serial
def _moncurve_fwd(x, p, o, c):
    # Fields after the mirror flag, three channels each: power, offset, break, slope, scale.
    gamma, off, brk, slope, scale = p[o + 1 + c], p[o + 4 + c], p[o + 7 + c], p[o + 10 + c], p[o + 13 + c]
    a = abs(x) if p[o] != ZERO else x
    v = a * slope if a <= brk else (a * scale + off) ** gamma
    return -v if p[o] != ZERO and x < ZERO else v


@serial
def _moncurve_rev(x, p, o, c):
    gamma, off, brk, slope, scale = p[o + 1 + c], p[o + 4 + c], p[o + 7 + c], p[o + 10 + c], p[o + 13 + c]
    a = abs(x) if p[o] != ZERO else x
    v = a * slope if a <= brk else a**gamma * scale - off
    return -v if p[o] != ZERO and x < ZERO else v


@serial
def moncurve_fwd(r, g, b, p, o):
    return _moncurve_fwd(r, p, o, 0), _moncurve_fwd(g, p, o, 1), _moncurve_fwd(b, p, o, 2)


@serial
def moncurve_rev(r, g, b, p, o):
    return _moncurve_rev(r, p, o, 0), _moncurve_rev(g, p, o, 1), _moncurve_rev(b, p, o, 2)


@kernel
def exponent_planes(code, r_in, g_in, b_in, r_out, g_out, b_out, p):
    """A lone exponent op (`code` picks which) over flat planes, float32 or half bits."""
    for i in prange(r_in.shape[0]):
        r, g, b = load_rgb(r_in, g_in, b_in, i)
        if code == EXPONENT:
            store_rgb(r_out, g_out, b_out, i, exponent(r, g, b, p, 0))
        elif code == MONCURVE_FWD:
            store_rgb(r_out, g_out, b_out, i, moncurve_fwd(r, g, b, p, 0))
        else:
            store_rgb(r_out, g_out, b_out, i, moncurve_rev(r, g, b, p, 0))


# Every chain runs this op through this loop (kernels/color.py), keyed by op code.
LONE = {
    EXPONENT: lambda r, g, b, a, ro, go, bo, ao, p, t, n: exponent_planes(EXPONENT, r, g, b, ro, go, bo, p),
    MONCURVE_FWD: lambda r, g, b, a, ro, go, bo, ao, p, t, n: exponent_planes(MONCURVE_FWD, r, g, b, ro, go, bo, p),
    MONCURVE_REV: lambda r, g, b, a, ro, go, bo, ao, p, t, n: exponent_planes(MONCURVE_REV, r, g, b, ro, go, bo, p),
}
