"""Separable Gaussian blur fused per output row: clamped vertical taps, then horizontal taps over a padded row."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import as_float, stored
from oxi_cli.jit import F32, F32_2D, I64, U16_2D, spatial_kernel

# Floats per strip: the accumulator strip stays in L1 while every tap streams past it (3-4x faster than
# sweeping whole 64 KB rows once per tap).
STRIP = 2048


@spatial_kernel
def blur(src, dst, channels, weights, first, last):
    """Rows [first, last) of src (H, W*C) into dst (H, W*C), float32 or half bits; weights has 2R+1 symmetric
    taps; edges replicate."""
    C = channels
    h, n = src.shape
    radius = (weights.shape[0] - 1) // 2
    pad = radius * C
    wc = weights[radius]
    padded = np.empty(n + 2 * pad, dtype=np.float32)
    acc = np.empty(STRIP, dtype=np.float32)  # sums stay float32 until stored, whatever dst holds
    for y in range(first, last):
        centre = src[y]
        for i0 in range(0, n, STRIP):
            i1 = min(i0 + STRIP, n)
            row = padded[pad + i0 : pad + i1]
            c = centre[i0:i1]
            for i in range(i1 - i0):
                row[i] = wc * as_float(c[i])
            for k in range(1, radius + 1):
                above = src[max(y - k, 0)][i0:i1]
                below = src[min(y + k, h - 1)][i0:i1]
                w = weights[radius + k]
                for i in range(i1 - i0):
                    row[i] += w * (as_float(above[i]) + as_float(below[i]))
        for i in range(pad):
            padded[i] = padded[pad + i % C]
            padded[pad + n + i] = padded[pad + n - C + i % C]
        out = dst[y]
        for i0 in range(0, n, STRIP):
            i1 = min(i0 + STRIP, n)
            for i in range(i1 - i0):
                acc[i] = wc * padded[pad + i0 + i]
            for k in range(1, radius + 1):
                w = weights[radius + k]
                left = padded[pad - k * C + i0 : pad - k * C + i1]
                right = padded[pad + k * C + i0 : pad + k * C + i1]
                for i in range(i1 - i0):
                    acc[i] += w * (left[i] + right[i])
            for i in range(i1 - i0):
                out[i0 + i] = stored(out, acc[i])


FORMS = [(blur, (src, dst, I64, F32, I64, I64)) for src in (F32_2D, U16_2D) for dst in (F32_2D, U16_2D)]
