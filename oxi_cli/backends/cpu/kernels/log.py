"""Log encodings per pixel as OCIO's Log renderers: lin -> log and log -> lin, with LogCamera's linear
segment; log2/exp2 in float32 as OCIO's exact (LOSSLESS) path."""

import numpy as np

from oxi_cli.backends.cpu.kernels.half import load_rgb, store_rgb
from oxi_cli.jit import kernel, prange, serial
from oxi_cli.ops.codes import LIN_TO_LOG, LOG_TO_LIN

ZERO = np.float32(0.0)
FLT_MIN = np.float32(np.finfo(np.float32).tiny)


@serial
def _to_log(x, p, o, c):
    # Fields after the camera flag, three channels each: lin slope, lin offset, log scale (log slope over
    # log2(base)), log offset, lin-side break, slope and offset of the linear segment.
    if p[o] != ZERO and x < p[o + 13 + c]:
        return p[o + 16 + c] * x + p[o + 19 + c]
    v = x * p[o + 1 + c] + p[o + 4 + c]
    v = v if v > FLT_MIN else FLT_MIN  # std::max(FLT_MIN, v): NaN and negatives floor too
    return np.log2(v) * p[o + 7 + c] + p[o + 10 + c]


@serial
def _to_lin(x, p, o, c):
    # Fields: -log offset, exp2 scale, -lin offset, 1 / lin slope, log-side break, 1 / line slope, -line offset.
    if p[o] != ZERO and x < p[o + 13 + c]:
        return p[o + 16 + c] * (x + p[o + 19 + c])
    v = np.exp2((x + p[o + 1 + c]) * p[o + 4 + c])
    return (v + p[o + 7 + c]) * p[o + 10 + c]


@serial
def lin_to_log(r, g, b, p, o):
    return _to_log(r, p, o, 0), _to_log(g, p, o, 1), _to_log(b, p, o, 2)


@serial
def log_to_lin(r, g, b, p, o):
    return _to_lin(r, p, o, 0), _to_lin(g, p, o, 1), _to_lin(b, p, o, 2)


@kernel
def log_planes(to_log, r_in, g_in, b_in, r_out, g_out, b_out, p):
    """A lone log op (encoding when `to_log`) over flat planes, float32 or half bits."""
    if to_log:
        for i in prange(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, lin_to_log(r, g, b, p, 0))
    else:
        for i in prange(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, log_to_lin(r, g, b, p, 0))


# Every chain runs this op through these loops (kernels/color.py), keyed by op code.
LONE = {
    LIN_TO_LOG: lambda r, g, b, a, ro, go, bo, ao, p, t, n: log_planes(True, r, g, b, ro, go, bo, p),
    LOG_TO_LIN: lambda r, g, b, a, ro, go, bo, ao, p, t, n: log_planes(False, r, g, b, ro, go, bo, p),
}
