"""Unpremultiply and re-premultiply R, G, B by alpha per pixel, as OIIO's colorconvert: an alpha under FLT_MIN
(0, negative, denormal or NaN) counts as 1, so such pixels are graded undivided."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, as_float, load_rgb, store_rgb, stored
from oxi_cli.jit import BOOL, F32, serial, vector_kernel
from oxi_cli.ops.codes import REPREMULT, UNPREMULT

FLT_MIN = np.float32(np.finfo(np.float32).tiny)
ONE = np.float32(1.0)


@serial
def divisor(a):
    """The alpha R, G, B are divided and multiplied by: 1 where it is under FLT_MIN or NaN (OIIO's test)."""
    return a if a >= FLT_MIN else ONE


@serial
def unpremult(r, g, b, a):
    d = divisor(a)
    return r / d, g / d, b / d


@serial
def repremult(r, g, b, a):
    d = divisor(a)
    return r * d, g * d, b * d


@vector_kernel
def unpremult_block(with_alpha, r_in, g_in, b_in, a_in, r_out, g_out, b_out, a_out):
    """R, G, B divided by alpha where it is at least FLT_MIN, float32 or half bits, in == out allowed; alpha copied
    as it is. Without alpha (`with_alpha` False: a_in is some other plane) R, G, B pass as they are and a_out is not
    written."""
    if with_alpha:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            a = as_float(a_in[i])
            store_rgb(r_out, g_out, b_out, i, unpremult(r, g, b, a))
            a_out[i] = stored(a_out, a)
    else:
        for i in range(r_in.shape[0]):
            store_rgb(r_out, g_out, b_out, i, load_rgb(r_in, g_in, b_in, i))


@vector_kernel
def repremult_block(with_alpha, r_in, g_in, b_in, a_in, r_out, g_out, b_out, a_out, r_src, g_src, b_src, a_src):
    """R, G, B multiplied by the alpha each pixel entered the program with (`a_src`; under FLT_MIN: 1, as
    unpremult divided by); alpha as the ops left it. Without alpha R, G, B pass. In a chain the in and out planes
    are float32 scratch and the source planes the image's own (float32 or half bits)."""
    if with_alpha:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, repremult(r, g, b, as_float(a_src[i])))
            a_out[i] = stored(a_out, as_float(a_in[i]))
    else:
        for i in range(r_in.shape[0]):
            store_rgb(r_out, g_out, b_out, i, load_rgb(r_in, g_in, b_in, i))


# Every chain runs these ops through these loops (kernels/color.py), keyed by op code; p[0] is 1 when channel
# 3 is alpha (ops/premult.py). REPREMULT's loop also takes the planes as they entered the program (SOURCE).
LONE = {
    UNPREMULT: lambda r, g, b, a, ro, go, bo, ao, p, t, n: unpremult_block(p[0] != 0, r, g, b, a, ro, go, bo, ao),
    REPREMULT: lambda r, g, b, a, ro, go, bo, ao, p, t, n, rs, gs, bs, as_: repremult_block(
        p[0] != 0, r, g, b, a, ro, go, bo, ao, rs, gs, bs, as_
    ),
}
SOURCE = frozenset({REPREMULT})
# REPREMULT always runs in a chain's float32 scratch (kernels/color.py), beside the source in either type.
FORMS = [
    *((unpremult_block, (BOOL, *(x,) * 8)) for x in PLANE_FORMS),
    *((repremult_block, (BOOL, *(F32,) * 8, *(x,) * 4)) for x in PLANE_FORMS),
]
