"""Exposure/contrast per pixel as OCIO's ExposureContrast renderers: a scale and offset, or a power around
a pivot (negatives clamp to 0 there, as OCIO's std::max(0, ...))."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, load_rgb, store_rgb
from oxi_cli.jit import F32, kernel, serial
from oxi_cli.ops.codes import EXPOSURE_CONTRAST

ZERO = np.float32(0.0)


@serial
def _channel(x, p, o):
    if p[o] == ZERO:
        return x * p[o + 1] + p[o + 2]
    v = x * p[o + 1]
    return (v if v > ZERO else ZERO) ** p[o + 2] * p[o + 3]


@serial
def exposure_contrast(r, g, b, p, o):
    """p[o] = mode (0: in * a + b; 1: max(0, in * a) ** b * c), p[o+1:o+4] = a, b, c."""
    return _channel(r, p, o), _channel(g, p, o), _channel(b, p, o)


@kernel
def exposure_contrast_block(r_in, g_in, b_in, r_out, g_out, b_out, p):
    """An exposure/contrast over flat planes, float32 or half bits, in == out allowed."""
    for i in range(r_in.shape[0]):
        r, g, b = load_rgb(r_in, g_in, b_in, i)
        store_rgb(r_out, g_out, b_out, i, exposure_contrast(r, g, b, p, 0))


# Every chain runs this op through this loop (kernels/color.py), keyed by op code.
LONE = {
    EXPOSURE_CONTRAST: lambda r, g, b, a, ro, go, bo, ao, p, t, n: exposure_contrast_block(r, g, b, ro, go, bo, p)
}
FORMS = [(exposure_contrast_block, (*(x,) * 6, F32)) for x in PLANE_FORMS]
