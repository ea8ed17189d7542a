"""Gaussian blur on each backend against the float64 reference (NOTES §1): taps ±ceil(3σ), edges clamp."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.ops import Blur
from tests import reference as ref
from tests.ops.harness import assert_close, run_spatial

# |oxi - ref| <= 1e-5 * max(1, Σ|w|·|v|): as for resize, float32 rounding scales with the terms summed,
# which is |ref| except where negative pixels cancel bright ones.
RTOL = 1e-5
SIGMAS = [0.3, 1.0, 2.25, 5.25, 20.0]
# name -> (width, height)
SHAPES = {"64x48": (64, 48), "one_pixel_wide": (1, 37), "one_pixel_tall": (29, 1), "tiny_5x3": (5, 3)}
CHANNELS = {"gray": 1, "rgb": 3, "rgba": 4}


def _check(backend, img: np.ndarray, sigma: float, what: str) -> None:
    got = run_spatial(backend, img, "blur", Blur(sigma), img.shape[:2])
    want, magnitude = ref.blur(img, sigma)
    assert_close(got, want, rtol=RTOL, scale=np.maximum(1.0, magnitude), what=what)


@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("sigma", SIGMAS)
def test_blur_matches_float64_reference(each_backend, sigma, shape, channels):
    w, h = SHAPES[shape]
    img = ref.hdr_image((h, w, CHANNELS[channels]), seed=w * h + CHANNELS[channels])
    _check(each_backend, img, sigma, f"sigma {sigma} on {w}x{h}")


def test_blur_kernel_wider_than_the_image_clamps_at_both_edges(each_backend):
    # 5x3 with σ=4: R=12 taps each side, so most taps of every output read a clamped edge pixel.
    img = ref.hdr_image((3, 5, 3), seed=4)
    assert Blur(4.0).radius == 12
    _check(each_backend, img, 4.0, "sigma 4 on 5x3")


@pytest.mark.parametrize("value", [np.nan, np.inf], ids=["nan", "inf"])
@pytest.mark.parametrize("sigma", [1.0, 2.25])
def test_nonfinite_pixel_spreads_only_within_the_kernel_footprint(each_backend, sigma, value):
    # Gaussian weights are never 0 inside ±R, so the footprint is exact: R pixels around it, no further.
    h, w, y, x = 40, 50, 17, 3
    img = ref.hdr_image((h, w, 3), seed=9)
    img[y, x, 0] = value
    got = run_spatial(each_backend, img, "blur", Blur(sigma), (h, w))
    ty, tx = ref.blur_weights(h, sigma)[1], ref.blur_weights(w, sigma)[1]
    footprint = ty[:, y][:, None] & tx[:, x][None, :]
    bad = ~np.isfinite(got[..., 0])
    assert (bad == footprint).all(), (
        f"non-finite at {np.argwhere(bad & ~footprint)[:5].tolist()} outside the footprint,"
        f" finite at {np.argwhere(footprint & ~bad)[:5].tolist()} inside it"
    )
    if value == np.inf:
        assert (got[..., 0][footprint] == np.inf).all(), "positive weights must keep +Inf positive"
    assert np.isfinite(got[..., 1:]).all(), "a non-finite value leaked into another channel"
    clean = img.copy()
    clean[y, x, 0] = 0.5  # outside the footprint the value cannot matter
    want, magnitude = ref.blur(clean, sigma)
    outside = ~footprint[..., None]
    assert_close(
        np.where(outside, got, 0.0),
        np.where(outside, want, 0.0),
        rtol=RTOL,
        scale=np.maximum(1.0, magnitude),
        what="outside the footprint",
    )
