"""Log encodings per pixel as OCIO's Log renderers: lin -> log and log -> lin, with LogCamera's linear
segment; log2/exp2 in float32 as OCIO's exact (LOSSLESS) path, correctly rounded."""

# As kernels/exponent.py: loops with no call and no branch (kernels/mathf.py's inline log2 and exp2; each pixel
# computes the line and the log and keeps what OCIO's branch takes), which LLVM vectorises, where libm's log2f
# and exp2f took a call a channel.

import numpy as np

from oxi_cli.backends.cpu.kernels.half import PLANE_FORMS, load_rgb, store_rgb
from oxi_cli.backends.cpu.kernels.mathf import exp2_f32, log2_f32
from oxi_cli.jit import BOOL, F32, serial, vector_kernel
from oxi_cli.ops.codes import LIN_TO_LOG, LOG_TO_LIN

ZERO = np.float32(0.0)
FLT_MIN = np.float32(np.finfo(np.float32).tiny)


@serial
def _channel(p, o, c):
    # Seven fields after the camera flag, three channels each. Encoding: lin slope, lin offset, log scale (log
    # slope over log2(base)), log offset, lin-side break, slope and offset of the linear segment. Decoding:
    # -log offset, exp2 scale, -lin offset, 1 / lin slope, log-side break, 1 / line slope, -line offset.
    return p[o + 1 + c], p[o + 4 + c], p[o + 7 + c], p[o + 10 + c], p[o + 13 + c], p[o + 16 + c], p[o + 19 + c]


@serial
def _to_log(x, q, camera):
    lin_slope, lin_off, log_scale, log_off, brk, line_slope, line_off = q
    v = x * lin_slope + lin_off
    v = v if v > FLT_MIN else FLT_MIN  # std::max(FLT_MIN, v): NaN and negatives floor too
    v = log2_f32(v) * log_scale + log_off
    return line_slope * x + line_off if camera & (x < brk) else v


@serial
def _to_lin(x, q, camera):
    neg_log_off, exp_scale, neg_lin_off, inv_lin_slope, brk, inv_line_slope, neg_line_off = q
    v = (exp2_f32((x + neg_log_off) * exp_scale) + neg_lin_off) * inv_lin_slope
    return inv_line_slope * (x + neg_line_off) if camera & (x < brk) else v


@vector_kernel
def log_block(to_log, r_in, g_in, b_in, r_out, g_out, b_out, p):
    """A log op (encoding when `to_log`) over flat planes, float32 or half bits, in == out allowed. p[0] is the
    camera flag (a line below the break), then _channel's fields."""
    camera = p[0] != ZERO
    qr, qg, qb = _channel(p, 0, 0), _channel(p, 0, 1), _channel(p, 0, 2)
    if to_log:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, (_to_log(r, qr, camera), _to_log(g, qg, camera), _to_log(b, qb, camera)))
    else:
        for i in range(r_in.shape[0]):
            r, g, b = load_rgb(r_in, g_in, b_in, i)
            store_rgb(r_out, g_out, b_out, i, (_to_lin(r, qr, camera), _to_lin(g, qg, camera), _to_lin(b, qb, camera)))


# Every chain runs this op through these loops (kernels/color.py), keyed by op code.
LONE = {
    LIN_TO_LOG: lambda r, g, b, a, ro, go, bo, ao, p, t, n: log_block(True, r, g, b, ro, go, bo, p),
    LOG_TO_LIN: lambda r, g, b, a, ro, go, bo, ao, p, t, n: log_block(False, r, g, b, ro, go, bo, p),
}
FORMS = [(log_block, (BOOL, *(x,) * 6, F32)) for x in PLANE_FORMS]
