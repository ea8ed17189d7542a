"""ASC CDL per pixel in float32, both clamp styles, as OCIO's CDL renderer computes it."""

# The power is kernels/mathf.py's inline pow and every `if` a select, so LLVM vectorises the loops: a libm powf call a
# channel kept them scalar (4096x2160 half, 2-core x86-64 machine (AVX-512): 0.18 -> 0.053 s without clamping, 0.091 ->
# 0.049 s with). pow_f32 is float64 pow rounded once bar a few tiny arguments (mathf.py); glibc's powf misses by an ulp
# for about 1 argument in 1500.

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, load_rgb, store_rgb
from oxi_cli.backends.cpu.kernels.mathf import pow_f32
from oxi_cli.jit import BOOL, F32, serial, vector_kernel
from oxi_cli.ops.codes import CDL_ASC, CDL_NOCLAMP

LUMA_R, LUMA_G, LUMA_B = np.float32(0.2126), np.float32(0.7152), np.float32(0.0722)
ZERO, ONE = np.float32(0.0), np.float32(1.0)


@serial
def _clamp01(v):
    # Written so NaN lands on 0, as OCIO's max(v, 0) does.
    return (ONE if v > ONE else v) if v > ZERO else ZERO


@serial
def _power_noclamp(v, p):
    # As OCIO's CDL renderer: NaN becomes 0 (matching its SSE path), negatives pass unchanged.
    raised = pow_f32(v, p)
    return raised if v > ZERO else (v if v <= ZERO else ZERO)


@serial
def cdl_noclamp(r, g, b, p, o):
    """p[o:o+10] = slope RGB, offset RGB, power RGB, sat; negatives skip the power, nothing is clamped."""
    r = _power_noclamp(r * p[o] + p[o + 3], p[o + 6])
    g = _power_noclamp(g * p[o + 1] + p[o + 4], p[o + 7])
    b = _power_noclamp(b * p[o + 2] + p[o + 5], p[o + 8])
    sat = p[o + 9]
    luma = LUMA_R * r + LUMA_G * g + LUMA_B * b
    return luma + sat * (r - luma), luma + sat * (g - luma), luma + sat * (b - luma)


@serial
def cdl_asc(r, g, b, p, o):
    """ASC v1.2: clamp to [0, 1] after slope/offset and after saturation."""
    r = pow_f32(_clamp01(r * p[o] + p[o + 3]), p[o + 6])
    g = pow_f32(_clamp01(g * p[o + 1] + p[o + 4]), p[o + 7])
    b = pow_f32(_clamp01(b * p[o + 2] + p[o + 5]), p[o + 8])
    sat = p[o + 9]
    luma = LUMA_R * r + LUMA_G * g + LUMA_B * b
    return _clamp01(luma + sat * (r - luma)), _clamp01(luma + sat * (g - luma)), _clamp01(luma + sat * (b - luma))


@vector_kernel
def cdl_block(asc, r_in, g_in, b_in, r_out, g_out, b_out, p):
    """A CDL (`asc`: clamping style) over flat planes, float32 or half bits, in == out allowed; p[0:10] as
    cdl_noclamp's."""
    if asc:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, cdl_asc(r, g, b, p, 0))
    else:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, cdl_noclamp(r, g, b, p, 0))


# Every chain runs this op through these loops (kernels/color.py), keyed by op code.
LONE = {
    CDL_NOCLAMP: lambda r, g, b, a, ro, go, bo, ao, p, t, n: cdl_block(False, r, g, b, ro, go, bo, p),
    CDL_ASC: lambda r, g, b, a, ro, go, bo, ao, p, t, n: cdl_block(True, r, g, b, ro, go, bo, p),
}
FORMS = [(cdl_block, (BOOL, *(x,) * 6, F32)) for x in PLANE_FORMS]
