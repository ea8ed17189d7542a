"""ASC CDL kernels in float32, one per clamp style (decided once, no branch per pixel)."""

import numpy as np

from oxi_cli.backends.cpu.jit import kernel, prange, serial

LUMA_R, LUMA_G, LUMA_B = np.float32(0.2126), np.float32(0.7152), np.float32(0.0722)
ZERO, ONE = np.float32(0.0), np.float32(1.0)


@serial
def _clamp01(v):
    # Written so NaN lands on 0, as OCIO's max(v, 0) does.
    if not v > ZERO:
        return ZERO
    return ONE if v > ONE else v


@serial
def _power_noclamp(v, p):
    # As OCIO's CDL renderer: NaN becomes 0 (matching its SSE path), negatives pass unchanged.
    if v > ZERO:
        return v**p
    return v if v <= ZERO else ZERO


@kernel
def cdl_noclamp(src, dst, slope, offset, power, sat):
    """src/dst are (pixels, C); negatives skip the power, NaN becomes 0, nothing is clamped."""
    for i in prange(src.shape[0]):
        r = src[i, 0] * slope[0] + offset[0]
        g = src[i, 1] * slope[1] + offset[1]
        b = src[i, 2] * slope[2] + offset[2]
        r = _power_noclamp(r, power[0])
        g = _power_noclamp(g, power[1])
        b = _power_noclamp(b, power[2])
        luma = LUMA_R * r + LUMA_G * g + LUMA_B * b
        dst[i, 0] = luma + sat * (r - luma)
        dst[i, 1] = luma + sat * (g - luma)
        dst[i, 2] = luma + sat * (b - luma)


@kernel
def cdl_asc(src, dst, slope, offset, power, sat):
    """ASC v1.2: clamp to [0, 1] after slope/offset and after saturation."""
    for i in prange(src.shape[0]):
        r = _clamp01(src[i, 0] * slope[0] + offset[0]) ** power[0]
        g = _clamp01(src[i, 1] * slope[1] + offset[1]) ** power[1]
        b = _clamp01(src[i, 2] * slope[2] + offset[2]) ** power[2]
        luma = LUMA_R * r + LUMA_G * g + LUMA_B * b
        dst[i, 0] = _clamp01(luma + sat * (r - luma))
        dst[i, 1] = _clamp01(luma + sat * (g - luma))
        dst[i, 2] = _clamp01(luma + sat * (b - luma))
