"""Separable resize fused per output row: vertical taps into a row buffer, then horizontal taps out."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import as_float, stored
from oxi_cli.jit import F32_2D, I32, I32_2D, I64, U16_2D, spatial_kernel, spatial_serial


@spatial_serial
def _vertical(src, row, index, weight, count):
    """row = sum_t weight[t] * src[index[t]] over whole source rows (contiguous, vectorises); 0 where no tap
    reads a data pixel."""
    if count == 0:
        row[:] = 0.0
        return
    s0 = src[index[0]]
    w0 = weight[0]
    for i in range(row.shape[0]):
        row[i] = w0 * as_float(s0[i])
    for t in range(1, count):
        s = src[index[t]]
        w = weight[t]
        for i in range(row.shape[0]):
            row[i] += w * as_float(s[i])


@spatial_kernel
def resize(src, dst, channels, yi, yw, yc, xi, xw, xc, first, last):
    """Output rows [first, last) of src (H, W*C) -> dst (Ho, Wo*C), each float32 or half bits; yi/yw/yc and
    xi/xw/xc come from ops.resize.axis_weights."""
    C = channels
    wo = dst.shape[1] // C
    row = np.empty(src.shape[1], dtype=np.float32)
    for oy in range(first, last):
        _vertical(src, row, yi[oy], yw[oy], yc[oy])
        out = dst[oy]
        for ox in range(wo):
            n = xc[ox]
            for c in range(C):
                acc = np.float32(0.0)
                if n > 0:
                    acc = xw[ox, 0] * row[xi[ox, 0] * C + c]
                for t in range(1, n):
                    acc += xw[ox, t] * row[xi[ox, t] * C + c]
                out[ox * C + c] = stored(out, acc)


FORMS = [(resize, (src, dst, I64, I32_2D, F32_2D, I32, I32_2D, F32_2D, I32, I64, I64))
         for src in (F32_2D, U16_2D) for dst in (F32_2D, U16_2D)]
