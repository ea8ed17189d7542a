"""3D LUT kernels: trilinear and OCIO's six-tetrahedra interpolation, float32, table indexed [r, g, b]."""

import numpy as np

from oxi_cli.backends.cpu.jit import kernel, prange
from oxi_cli.backends.cpu.kernels.lut1d import lut_index

ONE = np.float32(1.0)


@kernel
def lut3d_tetrahedral(src, dst, table, lo, scale):
    top = np.float32(table.shape[0] - 1)
    last = table.shape[0] - 1
    for i in prange(src.shape[0]):
        ir = lut_index(src[i, 0], lo[0], scale[0], top)
        ig = lut_index(src[i, 1], lo[1], scale[1], top)
        ib = lut_index(src[i, 2], lo[2], scale[2], top)
        r0, g0, b0 = int(ir), int(ig), int(ib)
        r1, g1, b1 = min(r0 + 1, last), min(g0 + 1, last), min(b0 + 1, last)
        fr, fg, fb = ir - np.float32(r0), ig - np.float32(g0), ib - np.float32(b0)
        for c in range(3):
            c000 = table[r0, g0, b0, c]
            c111 = table[r1, g1, b1, c]
            if fr > fg:
                if fg > fb:
                    v = (ONE - fr) * c000 + (fr - fg) * table[r1, g0, b0, c] \
                        + (fg - fb) * table[r1, g1, b0, c] + fb * c111
                elif fr > fb:
                    v = (ONE - fr) * c000 + (fr - fb) * table[r1, g0, b0, c] \
                        + (fb - fg) * table[r1, g0, b1, c] + fg * c111
                else:
                    v = (ONE - fb) * c000 + (fb - fr) * table[r0, g0, b1, c] \
                        + (fr - fg) * table[r1, g0, b1, c] + fg * c111
            elif fb > fg:
                v = (ONE - fb) * c000 + (fb - fg) * table[r0, g0, b1, c] \
                    + (fg - fr) * table[r0, g1, b1, c] + fr * c111
            elif fb > fr:
                v = (ONE - fg) * c000 + (fg - fb) * table[r0, g1, b0, c] \
                    + (fb - fr) * table[r0, g1, b1, c] + fr * c111
            else:
                v = (ONE - fg) * c000 + (fg - fr) * table[r0, g1, b0, c] \
                    + (fr - fb) * table[r1, g1, b0, c] + fb * c111
            dst[i, c] = v


@kernel
def lut3d_trilinear(src, dst, table, lo, scale):
    top = np.float32(table.shape[0] - 1)
    last = table.shape[0] - 1
    for i in prange(src.shape[0]):
        ir = lut_index(src[i, 0], lo[0], scale[0], top)
        ig = lut_index(src[i, 1], lo[1], scale[1], top)
        ib = lut_index(src[i, 2], lo[2], scale[2], top)
        r0, g0, b0 = int(ir), int(ig), int(ib)
        r1, g1, b1 = min(r0 + 1, last), min(g0 + 1, last), min(b0 + 1, last)
        fr, fg, fb = ir - np.float32(r0), ig - np.float32(g0), ib - np.float32(b0)
        for c in range(3):
            # Interpolate along b, then g, then r.
            c00 = table[r0, g0, b0, c] + fb * (table[r0, g0, b1, c] - table[r0, g0, b0, c])
            c01 = table[r0, g1, b0, c] + fb * (table[r0, g1, b1, c] - table[r0, g1, b0, c])
            c10 = table[r1, g0, b0, c] + fb * (table[r1, g0, b1, c] - table[r1, g0, b0, c])
            c11 = table[r1, g1, b0, c] + fb * (table[r1, g1, b1, c] - table[r1, g1, b0, c])
            c0 = c00 + fg * (c01 - c00)
            c1 = c10 + fg * (c11 - c10)
            dst[i, c] = c0 + fr * (c1 - c0)
