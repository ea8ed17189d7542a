"""Per-channel 1D LUT with linear interpolation; inputs clamp to the domain, NaN takes the first entry."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import load_rgb, store_rgb
from oxi_cli.jit import kernel, prange, serial
from oxi_cli.ops.codes import LUT1D

ZERO = np.float32(0.0)


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


@kernel
def lut1d_planes(r_in, g_in, b_in, r_out, g_out, b_out, p, t, n):
    """A lone 1D LUT over flat planes, float32 or half bits; p and t as lut1d's at offset 0."""
    for i in prange(r_in.shape[0]):
        r, g, b = load_rgb(r_in, g_in, b_in, i)
        store_rgb(r_out, g_out, b_out, i, lut1d(r, g, b, p, 0, t, 0, n))


# A chain of this op alone runs this loop (backend.color_chain), keyed by op code.
LONE = {LUT1D: lambda r, g, b, a, ro, go, bo, ao, p, t, n: lut1d_planes(r, g, b, ro, go, bo, p, t, n)}
