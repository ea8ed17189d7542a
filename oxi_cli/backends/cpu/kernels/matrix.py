"""4x4 colour matrix plus offset per pixel, column-vector convention; p[o:o+16] row-major, p[o+16:o+20] offset."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, as_float, load_rgb, store_rgb, stored
from oxi_cli.jit import BOOL, F32, kernel, serial
from oxi_cli.ops.codes import MATRIX_RGB, MATRIX_RGBA, MATRIX_SCALE, MATRIX_SCALE_RGBA

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


@serial
def matrix_scale(r, g, b, a, p, o):
    """A diagonal matrix, each channel on its own (OCIO's Scale renderers): in * scale + offset."""
    return r * p[o] + p[o + 16], g * p[o + 5] + p[o + 17], b * p[o + 10] + p[o + 18], a * p[o + 15] + p[o + 19]


@kernel
def matrix_block(rgba, r_in, g_in, b_in, a_in, r_out, g_out, b_out, a_out, p):
    """A matrix over flat planes, float32 or half bits, in == out allowed; alpha is read and written only when
    `rgba` (else the A planes may be any planes of the right type)."""
    if rgba:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            r, g, b, a = matrix_rgba(r, g, b, as_float(a_in[i]), p, 0)
            store_rgb(r_out, g_out, b_out, i, (r, g, b))
            a_out[i] = stored(a_out, a)
    else:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, matrix_rgb(r, g, b, p, 0))


@kernel
def matrix_scale_block(rgba, r_in, g_in, b_in, a_in, r_out, g_out, b_out, a_out, p):
    """A diagonal matrix over flat planes, float32 or half bits, in == out allowed; alpha is read and written
    only when `rgba`."""
    for i in range(r_in.shape[0]):
        r, g, b = load_rgb(r_in, g_in, b_in, i)
        r, g, b, a = matrix_scale(r, g, b, as_float(a_in[i]) if rgba else ONE, p, 0)
        store_rgb(r_out, g_out, b_out, i, (r, g, b))
        if rgba:
            a_out[i] = stored(a_out, a)


# Every chain runs this op through these loops (kernels/color.py), keyed by op code.
LONE = {
    MATRIX_RGB: lambda r, g, b, a, ro, go, bo, ao, p, t, n: matrix_block(False, r, g, b, a, ro, go, bo, ao, p),
    MATRIX_RGBA: lambda r, g, b, a, ro, go, bo, ao, p, t, n: matrix_block(True, r, g, b, a, ro, go, bo, ao, p),
    MATRIX_SCALE: lambda r, g, b, a, ro, go, bo, ao, p, t, n: matrix_scale_block(False, r, g, b, a, ro, go, bo, ao, p),
    MATRIX_SCALE_RGBA: lambda r, g, b, a, ro, go, bo, ao, p, t, n: matrix_scale_block(
        True, r, g, b, a, ro, go, bo, ao, p
    ),
}
FORMS = [(loop, (BOOL, *(x,) * 8, F32)) for loop in (matrix_block, matrix_scale_block) for x in PLANE_FORMS]
