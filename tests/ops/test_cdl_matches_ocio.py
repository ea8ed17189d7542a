"""CDL on each backend against OpenColorIO's CDLTransform (both styles), finite and non-finite pixels."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.ops import Cdl
from tests import reference as ref
from tests.ops.harness import (
    FLT_MIN,
    assert_bits_equal,
    assert_close,
    assert_separate_destination_matches_in_place,
    ocio_apply,
    ocio_cpu,
    run_color,
)

# |oxi - ocio| <= 2e-6 * max(|ocio|, s) + FLT_MIN, where s (reference.cdl) is the largest term a float32
# evaluation rounds: saturation mixes channels through luma, so a dim channel beside a 1e4 one carries
# rounding of the order of 1e4 * 2^-24 in OCIO itself. 2e-6 is ~34 roundings of that term. FLT_MIN covers
# a kernel that flushes float32 denormals to zero.
RTOL = 2e-6
SHAPE = (48, 64)
STYLES = {"noclamp": OCIO.CDL_NO_CLAMP, "asc": OCIO.CDL_ASC}


def _random_params(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "slope": tuple(rng.uniform(0.2, 2.5, 3)),
        "offset": tuple(rng.uniform(-0.3, 0.3, 3)),
        "power": tuple(rng.uniform(0.4, 2.5, 3)),
        "sat": float(rng.uniform(0.0, 2.0)),
    }


PARAMS = {
    "warm_grade": dict(slope=(1.12, 0.97, 0.88), offset=(0.012, -0.004, 0.021), power=(1.08, 0.95, 1.21), sat=0.85),
    "steep_power_oversaturated": dict(
        slope=(0.6, 1.4, 2.1), offset=(-0.05, 0.03, 0.2), power=(0.55, 1.9, 1.3), sat=1.6
    ),
    "sat_one_power_not_one": dict(slope=(1.3, 1.3, 1.3), offset=(0.1, 0.1, 0.1), power=(0.7, 0.7, 0.7), sat=1.0),
    "grey_sat_zero": dict(slope=(0.9, 1.1, 1.0), offset=(0.0, 0.05, -0.02), power=(1.4, 1.2, 0.8), sat=0.0),
    # OCIO folds a power-1 CDL into matrices (+ clamps for asc); finite results must still agree.
    "power_one_sat_not_one": dict(slope=(1.2, 0.8, 1.05), offset=(0.02, -0.03, 0.0), power=(1.0, 1.0, 1.0), sat=0.6),
    "random_a": _random_params(101),
    "random_b": _random_params(202),
    "random_c": _random_params(303),
}
# Params where OCIO runs its CDL renderer rather than the matrix fold (see the NaN/Inf tests below).
RENDERER_PARAMS = [name for name, p in PARAMS.items() if p["power"] != (1.0, 1.0, 1.0)]


def _op(style: str, params: dict) -> Cdl:
    return Cdl(style=style, **params)


def _ocio_transform(op: Cdl) -> OCIO.CDLTransform:
    t = OCIO.CDLTransform()
    t.setStyle(STYLES[op.style])
    t.setSlope(list(op.slope))
    t.setOffset(list(op.offset))
    t.setPower(list(op.power))
    t.setSat(op.sat)
    return t


def _reference(op: Cdl, img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float64 CDL on the float32-rounded parameters (OCIO renders with float32 parameters too)."""

    def f32(v: tuple[float, ...]) -> np.ndarray:
        return np.asarray(v, dtype=np.float32).astype(np.float64)

    return ref.cdl(img[..., :3], f32(op.slope), f32(op.offset), f32(op.power), float(np.float32(op.sat)), op.style)


@pytest.mark.parametrize("channels", [3, 4, 5], ids=["rgb", "rgba", "rgba_plus_z"])
@pytest.mark.parametrize("params", PARAMS, ids=str)
@pytest.mark.parametrize("style", STYLES)
def test_cdl_matches_ocio_lossless_on_finite_hdr(each_backend, style, params, channels):
    img = ref.hdr_image((*SHAPE, channels), seed=7 + channels)
    op = _op(style, PARAMS[params])
    want = ocio_apply(ocio_cpu(_ocio_transform(op)), img)
    got = run_color(each_backend, img, "cdl", op)
    _, scale = _reference(op, img)
    assert_close(got[..., :3], want[..., :3], rtol=RTOL, scale=scale, atol=FLT_MIN, inputs=img, what=f"{op}")
    assert_bits_equal(got[..., 3:], img[..., 3:], "channels after RGB must pass through the CDL untouched")


@pytest.mark.parametrize("params", ["warm_grade", "power_one_sat_not_one"])
@pytest.mark.parametrize("style", STYLES)
def test_float64_reference_agrees_with_ocio_under_the_same_error_measure(style, params):
    # Validates the error measure itself: OCIO (float32) must pass it against the exact maths, NaN/Inf
    # included, so a backend failing it is wrong, not unlucky.
    img = ref.hdr_image((*SHAPE, 3), seed=11, nonfinite=params != "power_one_sat_not_one")
    op = _op(style, PARAMS[params])
    want, scale = _reference(op, img)
    ocio = ocio_apply(ocio_cpu(_ocio_transform(op)), img)
    assert_close(ocio, want, rtol=RTOL, scale=scale, atol=FLT_MIN, inputs=img, what="OCIO vs float64 reference")


@pytest.mark.parametrize("params", RENDERER_PARAMS, ids=str)
@pytest.mark.parametrize("style", STYLES)
def test_cdl_matches_ocio_on_nan_and_inf(each_backend, style, params):
    # noclamp: NaN -> 0 before the power, any ±Inf channel -> whole pixel NaN; asc: NaN, -Inf -> 0, +Inf -> 1.
    img = ref.hdr_image((*SHAPE, 4), seed=23, nonfinite=True)
    op = _op(style, PARAMS[params])
    want = ocio_apply(ocio_cpu(_ocio_transform(op)), img, rgba=True)
    got = run_color(each_backend, img, "cdl", op)
    _, scale = _reference(op, img)
    assert_close(got[..., :3], want[..., :3], rtol=RTOL, scale=scale, atol=FLT_MIN, inputs=img, what=f"{op}")
    assert_bits_equal(got[..., 3], img[..., 3], "alpha (NaN/Inf included) must pass through the CDL bit-exact")


@pytest.mark.parametrize("style", STYLES)
def test_power_one_cdl_treats_nan_and_inf_like_any_other_power(each_backend, style):
    # OCIO's LOSSLESS optimiser turns a power-1 CDL into matrices, where NaN/Inf spread through the luma
    # row instead (pinned below). oxi keeps the CDL renderer's rule for every power, so results don't jump
    # when a grade's power moves off 1. OPTIMIZATION_NONE keeps OCIO's renderer: that is the oracle here.
    img = ref.hdr_image((*SHAPE, 3), seed=29, nonfinite=True)
    op = _op(style, PARAMS["power_one_sat_not_one"])
    want = ocio_apply(ocio_cpu(_ocio_transform(op), OCIO.OPTIMIZATION_NONE), img)
    got = run_color(each_backend, img, "cdl", op)
    _, scale = _reference(op, img)
    assert_close(got, want, rtol=RTOL, scale=scale, atol=FLT_MIN, inputs=img, what=f"{op}")


def test_ocio_lossless_folds_power_one_noclamp_cdl_into_matrices_that_spread_nan():
    # Pins the OCIO behaviour the test above deliberately departs from, so an OCIO change is noticed.
    op = _op("noclamp", PARAMS["power_one_sat_not_one"])
    px = np.array([[[np.nan, 0.5, 0.25], [np.inf, 0.5, 0.25]]], dtype=np.float32)
    lossless = ocio_apply(ocio_cpu(_ocio_transform(op)), px)
    renderer = ocio_apply(ocio_cpu(_ocio_transform(op), OCIO.OPTIMIZATION_NONE), px)
    assert np.isnan(lossless[0, 0]).all() and np.isposinf(lossless[0, 1]).all()
    assert np.isfinite(renderer[0, 0]).all() and np.isnan(renderer[0, 1]).all()


@pytest.mark.parametrize(
    ("style", "pixel", "lands_on"),
    [
        ("noclamp", [np.nan, 0.5, 0.25], 0.0),  # NaN channel -> 0 before the power; pixel stays finite
        ("noclamp", [0.5, np.inf, 0.25], None),  # ±Inf -> Inf - Inf in the saturation step: all NaN
        ("noclamp", [0.5, 0.25, -np.inf], None),
        ("asc", [np.nan, 0.5, 0.25], 0.0),  # the clamp sends NaN and -Inf to 0, +Inf to 1
        ("asc", [0.5, np.inf, 0.25], 1.0),
        ("asc", [0.5, 0.25, -np.inf], 0.0),
    ],
    ids=[
        "noclamp_nan_is_zero",
        "noclamp_inf_nans_pixel",
        "noclamp_minus_inf_nans_pixel",
        "asc_nan_is_zero",
        "asc_inf_is_one",
        "asc_minus_inf_is_zero",
    ],
)
def test_cdl_nonfinite_pixel_follows_ocio(each_backend, style, pixel, lands_on):
    op = _op(style, PARAMS["warm_grade"])
    px = np.array([[pixel]], dtype=np.float32)
    proc = ocio_cpu(_ocio_transform(op))
    ocio = ocio_apply(proc, px)
    if lands_on is None:
        assert np.isnan(ocio).all(), f"OCIO changed: {ocio}"
    else:
        # OCIO treats the non-finite channel like an input that slope/offset take exactly to `lands_on`.
        c = int(np.flatnonzero(~np.isfinite(px[0, 0]))[0])
        stand_in = px.copy()
        stand_in[0, 0, c] = (lands_on - op.offset[c]) / op.slope[c]
        np.testing.assert_allclose(ocio, ocio_apply(proc, stand_in), rtol=1e-5, atol=1e-6, err_msg="OCIO changed")
    got = run_color(each_backend, px, "cdl", op)
    assert_close(got, ocio, rtol=RTOL, scale=1.0, atol=FLT_MIN, inputs=px, what=f"{style} CDL of {pixel}")


def test_cdl_into_a_separate_destination_matches_in_place(each_backend):
    img = ref.hdr_image((*SHAPE, 4), seed=31, nonfinite=True)
    op = _op("noclamp", PARAMS["random_a"])
    assert_separate_destination_matches_in_place(each_backend, img, "cdl", op)
