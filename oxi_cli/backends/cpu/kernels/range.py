"""Range per pixel as OCIO's Range renderers: scale and offset, then clamp with std::max / std::min."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, load_rgb, store_rgb
from oxi_cli.jit import F32, kernel, serial
from oxi_cli.ops.codes import RANGE

ZERO = np.float32(0.0)


@serial
def _clamp(x, p, o):
    t = x * p[o] + p[o + 1]
    if p[o + 4] != ZERO and not p[o + 2] < t:  # std::max(lo, t): NaN becomes lo
        t = p[o + 2]
    if p[o + 5] != ZERO and not t < p[o + 3]:  # std::min(hi, t): NaN becomes hi
        t = p[o + 3]
    return t


@serial
def range_clamp(r, g, b, p, o):
    """p[o:o+6] = scale, offset, lower bound, upper bound, has lower, has upper."""
    return _clamp(r, p, o), _clamp(g, p, o), _clamp(b, p, o)


@kernel
def range_block(r_in, g_in, b_in, r_out, g_out, b_out, p):
    """A range over flat planes, float32 or half bits, in == out allowed."""
    for i in range(r_in.shape[0]):
        r, g, b = load_rgb(r_in, g_in, b_in, i)
        store_rgb(r_out, g_out, b_out, i, range_clamp(r, g, b, p, 0))


# Every chain runs this op through this loop (kernels/color.py), keyed by op code.
LONE = {RANGE: lambda r, g, b, a, ro, go, bo, ao, p, t, n: range_block(r, g, b, ro, go, bo, p)}
FORMS = [(range_block, (*(x,) * 6, F32)) for x in PLANE_FORMS]
