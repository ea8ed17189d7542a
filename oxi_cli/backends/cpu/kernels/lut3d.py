"""3D LUT per pixel: trilinear and OCIO's six-tetrahedra interpolation, float32, table indexed [r, g, b]."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, load_rgb, store_rgb
from oxi_cli.backends.cpu.kernels.lut1d import lut_index
from oxi_cli.jit import BOOL, F32, I64, kernel, serial
from oxi_cli.ops.codes import LUT3D_TETRAHEDRAL, LUT3D_TRILINEAR

ONE = np.float32(1.0)


@serial
def _corner(t, to, n, r, g, b, c):
    return t[to + ((r * n + g) * n + b) * 3 + c]


@serial
def _cell(r, g, b, p, o, n):
    """Lower corner, upper corner and fractions of the cell holding (r, g, b)."""
    top = np.float32(n - 1)
    ir = lut_index(r, p[o], p[o + 3], top)
    ig = lut_index(g, p[o + 1], p[o + 4], top)
    ib = lut_index(b, p[o + 2], p[o + 5], top)
    r0, g0, b0 = int(ir), int(ig), int(ib)
    r1, g1, b1 = min(r0 + 1, n - 1), min(g0 + 1, n - 1), min(b0 + 1, n - 1)
    return r0, g0, b0, r1, g1, b1, ir - np.float32(r0), ig - np.float32(g0), ib - np.float32(b0)


@serial
def _trilinear(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, c):
    # Along b, then g, then r.
    c00 = _corner(t, to, n, r0, g0, b0, c)
    c00 = c00 + fb * (_corner(t, to, n, r0, g0, b1, c) - c00)
    c01 = _corner(t, to, n, r0, g1, b0, c)
    c01 = c01 + fb * (_corner(t, to, n, r0, g1, b1, c) - c01)
    c10 = _corner(t, to, n, r1, g0, b0, c)
    c10 = c10 + fb * (_corner(t, to, n, r1, g0, b1, c) - c10)
    c11 = _corner(t, to, n, r1, g1, b0, c)
    c11 = c11 + fb * (_corner(t, to, n, r1, g1, b1, c) - c11)
    c0 = c00 + fg * (c01 - c00)
    return c0 + fr * ((c10 + fg * (c11 - c10)) - c0)


@serial
def lut3d_tetrahedral(r, g, b, p, o, t, to, n):
    """p[o:o+6] = domain min RGB, index scale RGB; t[to:] holds n³ RGB entries indexed [r, g, b].

    OCIO's six tetrahedra are one formula over the fractions sorted hi >= mid >= lo:
    (1 - hi) c000 + (hi - mid) c[hi axis] + (mid - lo) c[all but the lo axis] + lo c111, summed in that
    order as OCIO sums each case. Picking the two middle corners with selects instead of a branch tree
    keeps grainy footage (random fraction order) free of mispredicted branches. Ties pick either corner:
    its weight is then 0.
    """
    r0, g0, b0, r1, g1, b1, fr, fg, fb = _cell(r, g, b, p, o, n)
    base = to + ((r0 * n + g0) * n + b0) * 3
    dr, dg, db = (r1 - r0) * n * n * 3, (g1 - g0) * n * 3, (b1 - b0) * 3
    hi, lo = max(fr, fg, fb), min(fr, fg, fb)
    mid = max(min(fr, fg), min(max(fr, fg), fb))
    d_hi = dr if fr >= fg and fr >= fb else (dg if fg >= fb else db)
    d_lo = db if fb <= fg and fb <= fr else (dg if fg <= fr else dr)
    w0, w1, w2 = ONE - hi, hi - mid, mid - lo
    a, ab, c111 = base + d_hi, base + dr + dg + db - d_lo, base + dr + dg + db
    return (
        w0 * t[base] + w1 * t[a] + w2 * t[ab] + lo * t[c111],
        w0 * t[base + 1] + w1 * t[a + 1] + w2 * t[ab + 1] + lo * t[c111 + 1],
        w0 * t[base + 2] + w1 * t[a + 2] + w2 * t[ab + 2] + lo * t[c111 + 2],
    )


@serial
def lut3d_trilinear(r, g, b, p, o, t, to, n):
    r0, g0, b0, r1, g1, b1, fr, fg, fb = _cell(r, g, b, p, o, n)
    return (
        _trilinear(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, 0),
        _trilinear(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, 1),
        _trilinear(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, 2),
    )


@kernel
def lut3d_block(tetrahedral, r_in, g_in, b_in, r_out, g_out, b_out, p, t, n):
    """A 3D LUT over flat planes, float32 or half bits, in == out allowed; p and t as lut3d_tetrahedral's at
    offset 0."""
    if tetrahedral:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, lut3d_tetrahedral(r, g, b, p, 0, t, 0, n))
    else:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, lut3d_trilinear(r, g, b, p, 0, t, 0, n))


# Every chain runs this op through these loops (kernels/color.py), keyed by op code.
LONE = {
    LUT3D_TETRAHEDRAL: lambda r, g, b, a, ro, go, bo, ao, p, t, n: lut3d_block(True, r, g, b, ro, go, bo, p, t, n),
    LUT3D_TRILINEAR: lambda r, g, b, a, ro, go, bo, ao, p, t, n: lut3d_block(False, r, g, b, ro, go, bo, p, t, n),
}
FORMS = [(lut3d_block, (BOOL, *(x,) * 6, F32, F32, I64)) for x in PLANE_FORMS]
