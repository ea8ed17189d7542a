"""Separable Gaussian blur fused per output row: clamped vertical taps, then horizontal taps over a padded row."""

import numpy as np

from oxi_cli.backends.cpu.jit import kernel, prange


@kernel
def blur(src, dst, channels, weights):
    """src and dst are (H, W*C); weights has 2R+1 taps; edges replicate."""
    C = channels
    h, n = src.shape
    radius = (weights.shape[0] - 1) // 2
    pad = radius * C
    for y in prange(h):
        padded = np.empty(n + 2 * pad, dtype=np.float32)
        row = padded[pad:pad + n]
        first = src[min(max(y - radius, 0), h - 1)]
        w0 = weights[0]
        for i in range(n):
            row[i] = w0 * first[i]
        for k in range(1, 2 * radius + 1):
            s = src[min(max(y - radius + k, 0), h - 1)]
            w = weights[k]
            for i in range(n):
                row[i] += w * s[i]
        for i in range(pad):
            padded[i] = row[i % C]
            padded[pad + n + i] = row[n - C + i % C]
        out = dst[y]
        for i in range(n):
            out[i] = w0 * padded[i]
        for k in range(1, 2 * radius + 1):
            w = weights[k]
            off = k * C
            for i in range(n):
                out[i] += w * padded[i + off]
