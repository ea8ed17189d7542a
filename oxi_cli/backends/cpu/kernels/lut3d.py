"""3D LUT per pixel: trilinear and OCIO's six-tetrahedra interpolation, float32, table indexed [r, g, b]."""

import numpy as np

from oxi_cli.backends.cpu.jit import serial
from oxi_cli.backends.cpu.kernels.lut1d import lut_index

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
def _tetrahedral(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, c):
    c000 = _corner(t, to, n, r0, g0, b0, c)
    c111 = _corner(t, to, n, r1, g1, b1, c)
    if fr > fg:
        if fg > fb:
            return (ONE - fr) * c000 + (fr - fg) * _corner(t, to, n, r1, g0, b0, c) \
                + (fg - fb) * _corner(t, to, n, r1, g1, b0, c) + fb * c111
        if fr > fb:
            return (ONE - fr) * c000 + (fr - fb) * _corner(t, to, n, r1, g0, b0, c) \
                + (fb - fg) * _corner(t, to, n, r1, g0, b1, c) + fg * c111
        return (ONE - fb) * c000 + (fb - fr) * _corner(t, to, n, r0, g0, b1, c) \
            + (fr - fg) * _corner(t, to, n, r1, g0, b1, c) + fg * c111
    if fb > fg:
        return (ONE - fb) * c000 + (fb - fg) * _corner(t, to, n, r0, g0, b1, c) \
            + (fg - fr) * _corner(t, to, n, r0, g1, b1, c) + fr * c111
    if fb > fr:
        return (ONE - fg) * c000 + (fg - fb) * _corner(t, to, n, r0, g1, b0, c) \
            + (fb - fr) * _corner(t, to, n, r0, g1, b1, c) + fr * c111
    return (ONE - fg) * c000 + (fg - fr) * _corner(t, to, n, r0, g1, b0, c) \
        + (fr - fb) * _corner(t, to, n, r1, g1, b0, c) + fb * c111


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
    """p[o:o+6] = domain min RGB, index scale RGB; t[to:] holds n³ RGB entries indexed [r, g, b]."""
    r0, g0, b0, r1, g1, b1, fr, fg, fb = _cell(r, g, b, p, o, n)
    return (
        _tetrahedral(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, 0),
        _tetrahedral(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, 1),
        _tetrahedral(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, 2),
    )


@serial
def lut3d_trilinear(r, g, b, p, o, t, to, n):
    r0, g0, b0, r1, g1, b1, fr, fg, fb = _cell(r, g, b, p, o, n)
    return (
        _trilinear(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, 0),
        _trilinear(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, 1),
        _trilinear(t, to, n, r0, g0, b0, r1, g1, b1, fr, fg, fb, 2),
    )
