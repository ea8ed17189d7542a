"""Power curves per pixel as OCIO's Gamma renderers (powf, rounded as kernels/mathf.py's): basic with three
negative styles, and the moncurve (ExponentWithLinear) both ways, optionally mirrored."""

# The loops hold no call and no branch: kernels/mathf.py's inline pow, and every `if` a select (each pixel
# computes the line and the power and keeps the one OCIO's branch takes), so LLVM vectorises them, where
# libm's powf took a call a channel.

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, load_rgb, store_rgb
from oxi_cli.backends.cpu.kernels.mathf import pow_nonneg_f32
from oxi_cli.jit import F32, I64, serial, vector_kernel
from oxi_cli.ops.codes import EXPONENT, MONCURVE_FWD, MONCURVE_REV

ZERO = np.float32(0.0)
CLAMP, MIRROR = 0, 1


@serial
def _power(x, g, style):
    """x ** g; negatives: CLAMP takes max(0, x) first, so NaN becomes 0 as std::max(0, NaN) does; MIRROR
    gives sign(x) * |x| ** g; the third style (pass) leaves zero, negatives and NaN unchanged."""
    v = pow_nonneg_f32(abs(x) if style == MIRROR else (x if x > ZERO else ZERO), g)
    mirrored = -v if x < ZERO else v
    passed = v if x > ZERO else x
    return v if style == CLAMP else (mirrored if style == MIRROR else passed)


@serial
def _moncurve_channel(p, o, c):
    # Fields after the mirror flag, three channels each: power, offset, break, slope, scale.
    return p[o + 1 + c], p[o + 4 + c], p[o + 7 + c], p[o + 10 + c], p[o + 13 + c]


@serial
def _moncurve(x, q, mirror, forward):
    """Above the break point a power of the scaled, offset value (encoding) or a scaled power less the offset
    (decoding), below it a line; about 0 when `mirror`. q: one channel's fields."""
    gamma, off, brk, slope, scale = q
    a = abs(x) if mirror else x
    v = pow_nonneg_f32(a * scale + off if forward else a, gamma)
    v = v if forward else v * scale - off
    v = a * slope if a <= brk else v
    return -v if mirror & (x < ZERO) else v


@vector_kernel
def exponent_block(code, r_in, g_in, b_in, r_out, g_out, b_out, p):
    """An exponent op (`code` picks which) over flat planes, float32 or half bits, in == out allowed. EXPONENT's
    p[0] is the negative style (0 clamp, 1 mirror, 2 pass), p[1:4] the exponent RGB; a moncurve's p[0] its
    mirror flag, then _moncurve_channel's fields."""
    if code == EXPONENT:
        style, gr, gg, gb = int(p[0]), p[1], p[2], p[3]
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, (_power(r, gr, style), _power(g, gg, style), _power(b, gb, style)))
    else:
        mirror, forward = p[0] != ZERO, code == MONCURVE_FWD
        qr, qg, qb = _moncurve_channel(p, 0, 0), _moncurve_channel(p, 0, 1), _moncurve_channel(p, 0, 2)
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, (_moncurve(r, qr, mirror, forward), _moncurve(g, qg, mirror, forward),
                                               _moncurve(b, qb, mirror, forward)))


# Every chain runs this op through this loop (kernels/color.py), keyed by op code.
LONE = {
    EXPONENT: lambda r, g, b, a, ro, go, bo, ao, p, t, n: exponent_block(EXPONENT, r, g, b, ro, go, bo, p),
    MONCURVE_FWD: lambda r, g, b, a, ro, go, bo, ao, p, t, n: exponent_block(MONCURVE_FWD, r, g, b, ro, go, bo, p),
    MONCURVE_REV: lambda r, g, b, a, ro, go, bo, ao, p, t, n: exponent_block(MONCURVE_REV, r, g, b, ro, go, bo, p),
}
FORMS = [(exponent_block, (I64, *(x,) * 6, F32)) for x in PLANE_FORMS]
