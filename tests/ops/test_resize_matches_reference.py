"""Resize on each backend against the float64 reference (NOTES §1): every filter, up, down, thin images."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.ops import Resize
from tests import reference as ref
from tests.ops.harness import assert_close, run_spatial

# |oxi - ref| <= 1e-5 * max(1, Σ|w|·|v|) on finite HDR data (values up to 1e4, negatives). Σ|w|·|v| is |ref|
# unless negative lobes or negative pixels cancel: float32 rounding scales with the terms summed, so beside
# a 1e4 highlight a result of 0.9 carries ~1e4 * 2^-24 error in any float32 kernel (measured: <= 6.5 such
# roundings). Against max(1, |ref|) alone a correct float32 kernel fails by up to ~4x at those few values.
RTOL = 1e-5
FILTERS = list(ref.FILTERS)
# name -> (src width, src height, dst width, dst height)
CASES = {
    "down_noninteger": (97, 61, 41, 29),
    "up_noninteger": (37, 23, 89, 50),
    "up_x_down_y": (64, 48, 101, 30),
    "same_size": (50, 30, 50, 30),
    "large_down": (257, 131, 120, 77),
    "one_pixel_wide_source": (1, 40, 3, 17),
    "one_pixel_tall_source": (57, 1, 20, 4),
    "to_one_column": (40, 30, 1, 45),
    "to_one_row": (40, 30, 45, 1),
}
CHANNELS = {"gray": 1, "rgb": 3, "rgba": 4}


@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("filter_name", FILTERS)
def test_resize_matches_float64_reference(each_backend, filter_name, case, channels):
    sw, sh, dw, dh = CASES[case]
    img = ref.hdr_image((sh, sw, CHANNELS[channels]), seed=sw * sh)
    got = run_spatial(each_backend, img, "resize", Resize(dw, dh, filter_name), (dh, dw))
    want, magnitude = ref.resize(img, dw, dh, filter_name)
    assert_close(got, want, rtol=RTOL, scale=np.maximum(1.0, magnitude), what=f"{filter_name} {sw}x{sh}->{dw}x{dh}")


@pytest.mark.parametrize("value", [np.nan, np.inf], ids=["nan", "inf"])
@pytest.mark.parametrize(("case", "where"), [("up_noninteger", (11, 17)), ("down_noninteger", (0, 96))])
@pytest.mark.parametrize("filter_name", FILTERS)
def test_nonfinite_pixel_spreads_only_within_the_filter_footprint(each_backend, filter_name, case, where, value):
    # A NaN/Inf source value must reach every output whose taps give it a non-zero weight (it is not
    # hidden), may reach outputs that read it with weight 0 (0 * NaN), and nothing else. The second case
    # puts it in a corner, where clamped taps read it several times. Other channels stay finite.
    sw, sh, dw, dh = CASES[case]
    y, x = where
    img = ref.hdr_image((sh, sw, 3), seed=5)
    img[y, x, 1] = value
    got = run_spatial(each_backend, img, "resize", Resize(dw, dh, filter_name), (dh, dw))
    wy, ty = ref.resize_weights(sh, dh, filter_name)
    wx, tx = ref.resize_weights(sw, dw, filter_name)
    may = ty[:, y][:, None] & tx[:, x][None, :]
    must = (wy[:, y] != 0)[:, None] & (wx[:, x] != 0)[None, :]
    bad = ~np.isfinite(got[..., 1])
    assert not (bad & ~may).any(), f"non-finite outside the footprint at {np.argwhere(bad & ~may)[:5].tolist()}"
    assert bad[must].all(), f"non-finite hidden at {np.argwhere(must & ~bad)[:5].tolist()}"
    assert np.isfinite(got[..., [0, 2]]).all(), "a non-finite value leaked into another channel"
    clean = img.copy()
    clean[y, x, 1] = 0.5  # outside the footprint the value cannot matter
    want, magnitude = ref.resize(clean, dw, dh, filter_name)
    outside = ~may[..., None]
    assert_close(
        np.where(outside, got, 0.0),
        np.where(outside, want, 0.0),
        rtol=RTOL,
        scale=np.maximum(1.0, magnitude),
        what="outside",
    )
