"""LogCamera's linear segment on both backends against OCIO: its slope and offset are the float32 values OCIO's
renderer derives (LogUtils.cpp: some steps in double, some in float), so the line is OCIO's to the bit; near its
zero crossing a one-ulp offset was all of the value (1.6e-5 relative to max(|value|, 1e-3) before)."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.formats.ocio_ops import ops_from_processor
from tests.color.oracle import ocio_whole, run_oxi

# (base, log slope, log offset, lin slope, lin offset, lin break, linear slope or None), per channel R, G, B.
CAMERAS = {
    "per_channel_base8": (8.0, (0.3, 0.25, 0.28), (0.6, 0.4, 0.5), (0.9, 5.0, 2.0), (0.05, 0.05, 0.1),
                          (0.02, 0.02, 0.02), None),
    "acescct": (2.0, (0.05707762557,) * 3, (0.5547945205,) * 3, (1.0,) * 3, (0.0,) * 3, (0.0078125,) * 3, None),
    "slog3_linear_slope": (10.0, (0.25562072336,) * 3, (0.41055718475,) * 3, (5.26315789474,) * 3,
                           (0.05263157895,) * 3, (0.01125,) * 3, (6.62194371178,) * 3),
    "base_e": (2.718281828, (0.3, 0.25, 0.28), (0.6, 0.4, 0.5), (0.9, 5.0, 2.0), (0.05, 0.05, 0.1),
               (0.005, 0.01, 0.0078125), None),
}


def _transform(name: str, inverse: bool) -> OCIO.LogCameraTransform:
    base, log_slope, log_offset, lin_slope, lin_offset, lin_break, slope = CAMERAS[name]
    t = OCIO.LogCameraTransform(linSideBreak=list(lin_break), logSideSlope=list(log_slope),
                                logSideOffset=list(log_offset), linSideSlope=list(lin_slope),
                                linSideOffset=list(lin_offset),
                                direction=OCIO.TRANSFORM_DIR_INVERSE if inverse else OCIO.TRANSFORM_DIR_FORWARD)
    t.setBase(base)
    if slope is not None:
        t.setLinearSlopeValue(list(slope))
    return t


@pytest.mark.parametrize("inverse", [False, True], ids=["lin_to_log", "log_to_lin"])
@pytest.mark.parametrize("name", CAMERAS)
def test_camera_log_line_is_ocios_to_the_bit(backend, name, inverse):
    processor = OCIO.Config.CreateRaw().getProcessor(_transform(name, inverse))
    # Inputs on the linear side of the break, either way: lin values below it, or the log values OCIO maps them to.
    lin = np.linspace(-0.25, 0.0049, 4096, dtype=np.float32)
    x = np.repeat(lin[:, None], 3, axis=1).reshape(64, 64, 3)
    if inverse:
        x = ocio_whole(OCIO.Config.CreateRaw().getProcessor(_transform(name, False)), x)
    want = ocio_whole(processor, x)
    got = run_oxi(backend, ops_from_processor(processor), x)
    differ = got.view(np.uint32) != want.view(np.uint32)
    assert not differ.any(), (f"{int(differ.sum())} values differ from OCIO's, first input {x[differ][0]!r}: "
                              f"{got[differ][0]!r} != {want[differ][0]!r}")
