"""A chain of one colour op: a pixel loop of its own per op, 1.4-10x faster than the chain interpreter.

Numba outlines each parallel loop into a function of its own, which LLVM then optimises for that op alone
(the matrix loop vectorises); one loop holding every op, as kernels/color.py must, optimises none of them
as well. Same per-pixel functions, same arithmetic, so results are bit-identical with the interpreter's.
"""

from oxi_cli.backends.cpu.jit import kernel, prange, serial
from oxi_cli.backends.cpu.kernels.cdl import cdl_asc, cdl_noclamp
from oxi_cli.backends.cpu.kernels.half import as_float, stored
from oxi_cli.backends.cpu.kernels.lut1d import lut1d
from oxi_cli.backends.cpu.kernels.lut3d import lut3d_tetrahedral, lut3d_trilinear
from oxi_cli.backends.cpu.kernels.matrix import matrix_rgb, matrix_rgba
from oxi_cli.ops.program import CDL_ASC, CDL_NOCLAMP, LUT1D, LUT3D_TETRAHEDRAL, MATRIX_RGB, MATRIX_RGBA


@serial
def _load(r_in, g_in, b_in, i):
    return as_float(r_in[i]), as_float(g_in[i]), as_float(b_in[i])


@serial
def _store(r_out, g_out, b_out, i, rgb):
    r_out[i], g_out[i], b_out[i] = stored(r_out, rgb[0]), stored(g_out, rgb[1]), stored(b_out, rgb[2])


@kernel
def lone_op(code, r_in, g_in, b_in, a_in, r_out, g_out, b_out, a_out, p, t, n):
    """One op of ops.program with parameters at p[0:] and its table at t[0:]; planes as color.color_chain's.
    Alpha is read and written by MATRIX_RGBA only."""
    count = r_in.shape[0]
    if code == CDL_NOCLAMP:
        for i in prange(count):
            r, g, b = _load(r_in, g_in, b_in, i)
            _store(r_out, g_out, b_out, i, cdl_noclamp(r, g, b, p, 0))
    elif code == CDL_ASC:
        for i in prange(count):
            r, g, b = _load(r_in, g_in, b_in, i)
            _store(r_out, g_out, b_out, i, cdl_asc(r, g, b, p, 0))
    elif code == MATRIX_RGB:
        for i in prange(count):
            r, g, b = _load(r_in, g_in, b_in, i)
            _store(r_out, g_out, b_out, i, matrix_rgb(r, g, b, p, 0))
    elif code == MATRIX_RGBA:
        for i in prange(count):
            r, g, b = _load(r_in, g_in, b_in, i)
            r, g, b, a = matrix_rgba(r, g, b, as_float(a_in[i]), p, 0)
            _store(r_out, g_out, b_out, i, (r, g, b))
            a_out[i] = stored(a_out, a)
    elif code == LUT1D:
        for i in prange(count):
            r, g, b = _load(r_in, g_in, b_in, i)
            _store(r_out, g_out, b_out, i, lut1d(r, g, b, p, 0, t, 0, n))
    elif code == LUT3D_TETRAHEDRAL:
        for i in prange(count):
            r, g, b = _load(r_in, g_in, b_in, i)
            _store(r_out, g_out, b_out, i, lut3d_tetrahedral(r, g, b, p, 0, t, 0, n))
    else:
        for i in prange(count):
            r, g, b = _load(r_in, g_in, b_in, i)
            _store(r_out, g_out, b_out, i, lut3d_trilinear(r, g, b, p, 0, t, 0, n))
