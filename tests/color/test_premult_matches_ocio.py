"""Colour ops graded unpremultiplied (--unpremult) against a float64 unpremultiply, OpenColorIO's own CPU processor
(LOSSLESS) and re-premultiply, on HDR premultiplied pixels with alpha 0, fractional, 1, negative, denormal and NaN
and NaN/Inf in colour, on both backends, as OIIO's colorconvert(unpremult=1): an alpha under FLT_MIN counts as 1,
so light at alpha 0 is graded undivided; alpha comes out bit for bit as it went in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.execute import run_chain
from oxi_cli.formats.ocio_ops import ops_from_processor
from oxi_cli.ops import Cdl, ImageOp
from oxi_cli.ops.premult import unpremultiplied
from tests.color.oracle import ocio_unpremultiplied
from tests.ops.harness import assert_bits_equal, assert_close, write_cube

# OCIO's own tolerances for these transforms elsewhere (test_cdl_matches_ocio, test_configs_match_ocio): relative
# to the pixel's largest channel (saturation and matrices mix channels), floored at 1e-3 times its alpha.
RTOL, FLOOR = 1e-5, 1e-3
# Display-referred code values (the ACES 2.0 view): absolute, as test_configs_match_ocio, times alpha.
VIEW_ATOL = 1e-4
STUDIO = "ocio://studio-config-latest"


def _cdl_grade() -> Any:
    t = OCIO.CDLTransform()
    t.setSlope([1.2, 1.0, 0.8])
    t.setOffset([0.02, 0.02, 0.02])
    t.setPower([1.5, 1.5, 1.5])
    t.setSat(0.8)
    t.setStyle(OCIO.CDL_NO_CLAMP)
    return OCIO.Config.CreateRaw().getProcessor(t)


def _lut3d(tmp: Path) -> Any:
    rng = np.random.default_rng(4)
    rows = rng.uniform(-0.1, 1.4, (9**3, 3)).astype(np.float32)
    path = write_cube(tmp / "premult_look.cube", rows, dims=3, hi=(2.0, 2.0, 2.0))
    t = OCIO.FileTransform()
    t.setSrc(str(path))
    t.setInterpolation(OCIO.INTERP_TETRAHEDRAL)
    return OCIO.Config.CreateRaw().getProcessor(t)


def _with_host_op() -> Any:
    """A matrix, a transform oxi runs through OCIO's CPU processor (ACES 1.0 red modifier) and a gamma."""
    group = OCIO.GroupTransform()
    group.appendTransform(OCIO.MatrixTransform([1.1, 0.05, 0, 0, 0.02, 0.9, 0.03, 0, 0, 0.1, 1.05, 0, 0, 0, 0, 1]))
    group.appendTransform(OCIO.FixedFunctionTransform(OCIO.FIXED_FUNCTION_ACES_RED_MOD_10))
    group.appendTransform(OCIO.ExponentTransform([2.2, 2.2, 2.2, 1.0], negativeStyle=OCIO.NEGATIVE_MIRROR))
    return OCIO.Config.CreateRaw().getProcessor(group)


def _studio(src: str, dst: str) -> Any:
    return OCIO.Config.CreateFromFile(STUDIO).getProcessor(src, dst)


def _view() -> Any:
    dvt = OCIO.DisplayViewTransform(src="ACEScg", display="sRGB - Display", view="ACES 2.0 - SDR 100 nits (Rec.709)")
    return OCIO.Config.CreateFromFile(STUDIO).getProcessor(dvt)


PROCESSORS = {
    "cdl": (lambda tmp: _cdl_grade(), {}),
    "lut3d": (_lut3d, {}),
    "acescg_to_acescct": (lambda tmp: _studio("ACEScg", "ACEScct"), {}),
    "host_fallback_between_kernels": (lambda tmp: _with_host_op(), {}),
    "aces2_sdr_view": (lambda tmp: _view(), {"atol": VIEW_ATOL}),
}


@pytest.fixture(scope="module")
def premultiplied(hdr_image: np.ndarray) -> np.ndarray:
    """The HDR test image (negatives, NaN, +-Inf) as premultiplied colour, RGBA float32: alpha 0 (colour kept:
    'glow' pixels), 1, and fractional from 1e-3 up, in every row (so the NaN/Inf pixels meet each kind)."""
    height, width, _ = hdr_image.shape
    rng = np.random.default_rng(21)
    alpha = rng.uniform(1e-3, 1.0, (height, width)).astype(np.float32)
    alpha[:, 0::4] = 0.0
    alpha[:, 1::4] = 1.0
    alpha[:, 2::8] = -0.0  # a signed zero is alpha 0 too
    alpha[:, 3::8] = -0.25  # under FLT_MIN: divided by 1, as OIIO (a negative alpha is no coverage)
    alpha[:, 5::16] = np.float32(1e-40)  # a denormal: under FLT_MIN too
    alpha[:, 7::16] = np.nan
    return np.concatenate([hdr_image, alpha[..., None]], axis=-1)


def run_unpremultiplied(backend: Any, ops: list[Any], rgba: np.ndarray) -> np.ndarray:
    """The ops as `--unpremult` runs them (each colour run wrapped) on RGBA planes, alpha in channel 3."""
    planes = [np.ascontiguousarray(rgba[..., c]) for c in range(4)]
    handle = run_chain(backend, planes, unpremultiplied(ops), True)
    return np.stack(backend.download_planes(handle, np.float32), axis=-1)


@pytest.mark.parametrize("name", sorted(PROCESSORS))
def test_unpremultiplied_grades_match_ocio_between_a_float64_unpremultiply_and_premultiply(
    backend, premultiplied, tmp_path, name
):
    make, tolerance = PROCESSORS[name]
    processor = make(tmp_path)
    ops = ops_from_processor(processor)
    got = run_unpremultiplied(backend, ops, premultiplied)
    want = ocio_unpremultiplied(processor, premultiplied)
    with np.errstate(invalid="ignore"):
        alpha = np.where(premultiplied[..., 3:] >= np.finfo(np.float32).tiny, premultiplied[..., 3:], 1.0)
        brightest = np.nanmax(np.where(np.isfinite(want[..., :3]), np.abs(want[..., :3]), 0.0), axis=-1,
                              keepdims=True)
    assert_close(got[..., :3], want[..., :3], rtol=RTOL, scale=np.maximum(brightest, FLOOR * alpha),
                 atol=tolerance.get("atol", 0.0) * alpha, inputs=premultiplied, what=f"{name} on {backend.name}",
                 figure=f"{name} {backend.name}")
    assert_bits_equal(got[..., 3], premultiplied[..., 3], f"{name}: alpha")


def test_light_at_alpha_0_is_graded_undivided_as_oiiotool_does(backend, premultiplied):
    """A glow over nothing (RGB > 0, alpha 0, negative, denormal or NaN) comes out graded as the stored values
    are, bit for bit, not left in the old colour space (OIIO's colorconvert: `a >= FLT_MIN ? a : 1`)."""
    ops = ops_from_processor(_cdl_grade())
    got = run_unpremultiplied(backend, ops, premultiplied)
    planes = [np.ascontiguousarray(premultiplied[..., c]) for c in range(4)]
    stored = np.stack(backend.download_planes(run_chain(backend, planes, ops, True), np.float32), -1)
    with np.errstate(invalid="ignore"):
        uncovered = ~(premultiplied[..., 3] >= np.finfo(np.float32).tiny)
    assert uncovered.sum() > 100
    assert_bits_equal(got[uncovered], stored[uncovered], "alpha under FLT_MIN")
    assert not np.array_equal(got[uncovered, :3], premultiplied[uncovered, :3])


def test_the_issues_grade_differs_from_grading_premultiplied_values(cpu_backend, premultiplied):
    """The default (no --unpremult) grades the stored values: edges and the alpha-0 background move."""
    processor = _cdl_grade()
    ops = ops_from_processor(processor)
    straight = run_unpremultiplied(cpu_backend, ops, premultiplied)
    planes = [np.ascontiguousarray(premultiplied[..., c]) for c in range(4)]
    stored = np.stack(cpu_backend.download_planes(run_chain(cpu_backend, planes, ops, True), np.float32), -1)
    edge = (premultiplied[..., 3] > 0) & (premultiplied[..., 3] < 0.5) & np.isfinite(premultiplied).all(-1)
    assert np.abs(straight[edge, :3] - stored[edge, :3]).max() > 0.01
    zero = premultiplied[..., 3] == 0
    assert not np.array_equal(stored[zero], premultiplied[zero])


def test_a_layer_without_alpha_is_graded_as_is(backend, hdr_image):
    ops = [Cdl(slope=(1.2, 1.0, 0.8), offset=(0.02,) * 3, power=(1.5,) * 3, sat=0.8)]
    planes = [np.ascontiguousarray(hdr_image[..., c]) for c in range(3)]
    plain = backend.download_planes(run_chain(backend, [p.copy() for p in planes], ops, False), np.float32)
    wrapped = backend.download_planes(run_chain(backend, planes, unpremultiplied(ops), False), np.float32)
    assert_bits_equal(np.stack(wrapped, -1), np.stack(plain, -1), "unpremultiplied without alpha")


def test_half_pixels_keep_alpha_and_grade_alpha_0_pixels_undivided(backend, premultiplied):
    ops = [Cdl(slope=(1.2, 1.0, 0.8), offset=(0.02,) * 3, power=(1.5,) * 3, sat=0.8)]
    finite = np.where(np.isfinite(premultiplied), premultiplied, 0.5)  # half NaN payloads are the device's
    with np.errstate(over="ignore"):
        half = finite.astype(np.float16)
    planes = [np.ascontiguousarray(half[..., c]) for c in range(4)]
    handle = run_chain(backend, [p.copy() for p in planes], unpremultiplied(ops), True, half_result=True)
    got = np.stack(backend.download_planes(handle, np.float16), -1)
    stored = np.stack(backend.download_planes(run_chain(backend, planes, ops, True, half_result=True),
                                              np.float16), -1)
    zero = ~(half[..., 3].astype(np.float32) >= np.finfo(np.float32).tiny)  # compared in float32, as OIIO
    np.testing.assert_array_equal(got[zero].view(np.uint16), stored[zero].view(np.uint16))
    np.testing.assert_array_equal(got[..., 3].view(np.uint16), half[..., 3].view(np.uint16))
    assert not np.array_equal(got[~zero, :3], half[~zero, :3])


def test_the_wrapping_goes_around_each_run_of_colour_ops_and_leaves_out_identities():
    from oxi_cli.ops import Resize
    from oxi_cli.ops.premult import Repremult, Unpremult, UnpremultipliedOnHost

    grade, identity = Cdl(slope=(1.1, 1.0, 0.9)), Cdl()
    host = ops_from_processor(_with_host_op())
    assert [type(op).__name__ for op in host] == ["Matrix", "OcioCpu", "Exponent"]
    resize = Resize(8, 8, "box")
    chain = unpremultiplied([grade, identity, resize, identity, *host, Resize(4, 4, "box"), identity])
    names = [type(op).__name__ for op in chain]
    assert names == ["Unpremult", "Cdl", "Repremult", "Resize", "Unpremult", "Matrix", "Repremult",
                     "UnpremultipliedOnHost", "Unpremult", "Exponent", "Repremult", "Resize"]
    assert isinstance(chain[7], UnpremultipliedOnHost) and chain[7].op is host[1]
    assert all(isinstance(op, (Unpremult, Repremult, ImageOp)) or not op.is_identity() for op in chain)
