"""4x4 colour matrix plus offset, column-vector convention, on (pixels, C) float32 arrays."""

import numpy as np

from oxi_cli.backends.cpu.jit import kernel, prange

ONE = np.float32(1.0)


@kernel
def matrix_rgb(src, dst, m, off):
    """No alpha in the image: alpha is taken as 1 and only R, G, B are written."""
    for i in prange(src.shape[0]):
        r, g, b = src[i, 0], src[i, 1], src[i, 2]
        dst[i, 0] = m[0, 0] * r + m[0, 1] * g + m[0, 2] * b + (m[0, 3] * ONE + off[0])
        dst[i, 1] = m[1, 0] * r + m[1, 1] * g + m[1, 2] * b + (m[1, 3] * ONE + off[1])
        dst[i, 2] = m[2, 0] * r + m[2, 1] * g + m[2, 2] * b + (m[2, 3] * ONE + off[2])


@kernel
def matrix_rgba(src, dst, m, off):
    """Channel 3 is alpha and is transformed by the fourth row."""
    for i in prange(src.shape[0]):
        r, g, b, a = src[i, 0], src[i, 1], src[i, 2], src[i, 3]
        dst[i, 0] = m[0, 0] * r + m[0, 1] * g + m[0, 2] * b + m[0, 3] * a + off[0]
        dst[i, 1] = m[1, 0] * r + m[1, 1] * g + m[1, 2] * b + m[1, 3] * a + off[1]
        dst[i, 2] = m[2, 0] * r + m[2, 1] * g + m[2, 2] * b + m[2, 3] * a + off[2]
        dst[i, 3] = m[3, 0] * r + m[3, 1] * g + m[3, 2] * b + m[3, 3] * a + off[3]
