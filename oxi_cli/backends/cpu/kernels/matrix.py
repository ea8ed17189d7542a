"""4x4 colour matrix plus offset per pixel, column-vector convention; p[o:o+16] row-major, p[o+16:o+20] offset."""

import numpy as np

from oxi_cli.jit import BOOL, F32, kernel, serial
from oxi_cli.ops.codes import MATRIX_RGB, MATRIX_RGBA

ONE = np.float32(1.0)


@serial
def matrix_rgb(r, g, b, p, o):
    """Alpha is not read: taken as 1 (an image without alpha) and never written."""
    return (
        p[o] * r + p[o + 1] * g + p[o + 2] * b + (p[o + 3] * ONE + p[o + 16]),
        p[o + 4] * r + p[o + 5] * g + p[o + 6] * b + (p[o + 7] * ONE + p[o + 17]),
        p[o + 8] * r + p[o + 9] * g + p[o + 10] * b + (p[o + 11] * ONE + p[o + 18]),
    )


@serial
def matrix_rgba(r, g, b, a, p, o):
    """Alpha is read and written by the fourth row and column."""
    return (
        p[o] * r + p[o + 1] * g + p[o + 2] * b + p[o + 3] * a + p[o + 16],
        p[o + 4] * r + p[o + 5] * g + p[o + 6] * b + p[o + 7] * a + p[o + 17],
        p[o + 8] * r + p[o + 9] * g + p[o + 10] * b + p[o + 11] * a + p[o + 18],
        p[o + 12] * r + p[o + 13] * g + p[o + 14] * b + p[o + 15] * a + p[o + 19],
    )


@kernel
def matrix_block(rgba, r, g, b, a, p):
    """A matrix over float32 planes in place; alpha is read and written only when `rgba` (else `a` may be any
    plane)."""
    if rgba:
        for i in range(r.shape[0]):
            r[i], g[i], b[i], a[i] = matrix_rgba(r[i], g[i], b[i], a[i], p, 0)
    else:
        for i in range(r.shape[0]):
            r[i], g[i], b[i] = matrix_rgb(r[i], g[i], b[i], p, 0)


# Every chain runs this op through these loops (kernels/color.py), keyed by op code.
LONE = {
    MATRIX_RGB: lambda r, g, b, a, p, t, n: matrix_block(False, r, g, b, a, p),
    MATRIX_RGBA: lambda r, g, b, a, p, t, n: matrix_block(True, r, g, b, a, p),
}
FORMS = [(matrix_block, (BOOL, F32, F32, F32, F32, F32))]
