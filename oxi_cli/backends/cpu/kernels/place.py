"""The image at an offset inside a box of zeros, a range of output rows a call: bars zeroed, the rest copied."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import as_float, stored
from oxi_cli.jit import F32_2D, I64, U16_2D, kernel


@kernel
def place(src, dst, x, y, first, last):
    """Rows [first, last) of dst[r, c] = src[r - y, c - x] where that lies inside src, else 0; src and dst
    are (H, W) planes, float32 or half bits (a value goes through float32, which holds every half exactly)."""
    sh, sw = src.shape
    dh, dw = dst.shape
    c0 = min(max(x, 0), dw)  # output columns [c0, c1) read the source
    c1 = min(max(x + sw, 0), dw)
    zero = np.float32(0.0)
    for r in range(first, last):
        out = dst[r]
        sy = r - y
        if sy < 0 or sy >= sh:
            for c in range(dw):
                out[c] = stored(out, zero)
            continue
        row = src[sy]
        for c in range(c0):
            out[c] = stored(out, zero)
        for c in range(c0, c1):
            out[c] = stored(out, as_float(row[c - x]))
        for c in range(c1, dw):
            out[c] = stored(out, zero)


FORMS = [(place, (src, dst, I64, I64, I64, I64)) for src in (F32_2D, U16_2D) for dst in (F32_2D, U16_2D)]
