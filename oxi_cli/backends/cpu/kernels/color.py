"""The colour-chain interpreter: every colour op of a chain applied per pixel with one read and one write."""

import numpy as np

from oxi_cli.backends.cpu.jit import kernel, prange
from oxi_cli.backends.cpu.kernels.cdl import cdl_asc, cdl_noclamp
from oxi_cli.backends.cpu.kernels.lut1d import lut1d
from oxi_cli.backends.cpu.kernels.lut3d import lut3d_tetrahedral, lut3d_trilinear
from oxi_cli.backends.cpu.kernels.matrix import matrix_rgb, matrix_rgba
from oxi_cli.ops.program import (
    CDL_ASC,
    CDL_NOCLAMP,
    LUT1D,
    LUT3D_TETRAHEDRAL,
    MATRIX_RGB,
    MATRIX_RGBA,
)

ONE = np.float32(1.0)


@kernel
def color_chain(src, dst, ops, p, t, uses_alpha):
    """src/dst are (pixels, C); ops rows are (code, param offset, table offset, table size) from ops.program."""
    for i in prange(src.shape[0]):
        r, g, b = src[i, 0], src[i, 1], src[i, 2]
        a = src[i, 3] if uses_alpha else ONE
        for j in range(ops.shape[0]):
            code, o, to, n = ops[j, 0], ops[j, 1], ops[j, 2], ops[j, 3]
            if code == CDL_NOCLAMP:
                r, g, b = cdl_noclamp(r, g, b, p, o)
            elif code == CDL_ASC:
                r, g, b = cdl_asc(r, g, b, p, o)
            elif code == MATRIX_RGB:
                r, g, b = matrix_rgb(r, g, b, p, o)
            elif code == MATRIX_RGBA:
                r, g, b, a = matrix_rgba(r, g, b, a, p, o)
            elif code == LUT1D:
                r, g, b = lut1d(r, g, b, p, o, t, to, n)
            elif code == LUT3D_TETRAHEDRAL:
                r, g, b = lut3d_tetrahedral(r, g, b, p, o, t, to, n)
            else:
                r, g, b = lut3d_trilinear(r, g, b, p, o, t, to, n)
        dst[i, 0], dst[i, 1], dst[i, 2] = r, g, b
        if uses_alpha:
            dst[i, 3] = a
