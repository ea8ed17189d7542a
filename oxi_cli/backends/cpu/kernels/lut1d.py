"""Per-channel 1D LUT with linear interpolation; inputs clamp to the domain, NaN takes the first entry."""

import numpy as np

from oxi_cli.backends.cpu.jit import kernel, prange, serial

ZERO = np.float32(0.0)


@serial
def lut_index(x, lo, scale, top):
    """Continuous table index of x, clamped to [0, top]; NaN maps to 0 (shared with the 3D LUT)."""
    idx = (x - lo) * scale
    if not idx > ZERO:
        return ZERO
    return top if idx > top else idx


@kernel
def lut1d(src, dst, table, lo, scale):
    top = np.float32(table.shape[0] - 1)
    last = table.shape[0] - 1
    for i in prange(src.shape[0]):
        for c in range(3):
            idx = lut_index(src[i, c], lo[c], scale[c], top)
            i0 = int(idx)
            i1 = min(i0 + 1, last)
            f = idx - np.float32(i0)
            dst[i, c] = table[i0, c] + f * (table[i1, c] - table[i0, c])
