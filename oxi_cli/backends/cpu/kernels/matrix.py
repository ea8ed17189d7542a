"""4x4 colour matrix plus offset per pixel, column-vector convention; p[o:o+16] row-major, p[o+16:o+20] offset."""

import numpy as np

from oxi_cli.backends.cpu.jit import serial

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
