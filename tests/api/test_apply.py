"""apply(): a chain on a numpy array or an oxi Image gives what the file pipeline writes, never touches its input,
and agrees between each accelerator and the host within the backends' stated tolerances
(tests/backends/test_accelerator_parity.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import oxi_cli as oxi
from oxi_cli.api import devices
from oxi_cli.backends.registry import HOST, kind
from tests import backends_under_test as under_test
from tests import reference as ref
from tests.backends.test_accelerator_parity import RTOL, _cdl_scale, _finite
from tests.cli.conftest import hdr_rgba, read_exr, write_exr
from tests.ops.harness import FLT_MIN, assert_close

GRADE = oxi.Cdl(slope=(1.1, 1.0, 0.9), offset=(0.01, 0.0, -0.01), power=(1.2, 1.0, 0.9), sat=0.9)
MATRIX = oxi.Matrix([0.6, 0.3, 0.1, 0.05, 0.9, 0.05, 0.02, 0.1, 0.88])
CHAIN = GRADE | MATRIX | oxi.Resize("50%") | oxi.Blur(1.5)


def _planes_of(path: Path, names: str = "RGBA") -> np.ndarray:
    _, planes = read_exr(path)
    return np.stack([planes[c] for c in names], axis=-1)


@pytest.mark.parametrize("half", [False, True], ids=["float32", "float16"])
def test_an_array_gets_the_pixels_the_file_pipeline_writes(tmp_path: Path, half: bool):
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(37, 53), half=half, aovs=False)
    oxi.process(plate, tmp_path / "out.exr", CHAIN, backend="cpu")
    pixels = _planes_of(plate)
    got = oxi.apply(pixels, CHAIN, backend="cpu")
    assert got.dtype == pixels.dtype and got.shape == (19, 27, 4)  # 50% of 53x37, halves rounded up as oiiotool
    np.testing.assert_array_equal(got, _planes_of(tmp_path / "out.exr"))


def test_the_input_array_is_never_written_and_out_receives_the_result():
    pixels = ref.hdr_image((16, 24, 4), seed=1)
    before = pixels.copy()
    fresh = oxi.apply(pixels, GRADE, backend="cpu")
    np.testing.assert_array_equal(pixels, before)
    out = np.empty_like(pixels)
    assert oxi.apply(pixels, GRADE, backend="cpu", out=out) is out
    np.testing.assert_array_equal(out, fresh)
    assert oxi.apply(pixels, GRADE, backend="cpu", out=pixels) is pixels  # in place, when asked
    np.testing.assert_array_equal(pixels, fresh)
    single = ref.hdr_image((16, 24, 1), seed=2)  # a one-channel array's plane is contiguous: still copied
    kept = single.copy()
    oxi.apply(single, oxi.Blur(2), backend="cpu")
    np.testing.assert_array_equal(single, kept)


def test_named_channels_and_layers_grade_as_the_command_grades_them():
    rng = np.random.default_rng(3)
    pixels = rng.random((8, 8, 7), dtype=np.float32)
    names = ["R", "G", "B", "A", "diffuse.R", "diffuse.G", "diffuse.B"]
    picture = oxi.apply(pixels, oxi.Cdl(slope=2), channels=names, backend="cpu")
    np.testing.assert_allclose(picture[..., :3], pixels[..., :3] * 2, rtol=1e-6)
    np.testing.assert_array_equal(picture[..., 3:], pixels[..., 3:])  # alpha and the other layer pass through
    both = oxi.apply(pixels, oxi.Cdl(slope=2), channels=names, layers="diffuse", backend="cpu")
    np.testing.assert_allclose(both[..., 4:], pixels[..., 4:] * 2, rtol=1e-6)


@pytest.mark.parametrize(("pixels", "kwargs", "words"), [
    (np.zeros((4, 4, 3), np.float64), {}, "float32 or float16 array .* got float64"),
    (np.zeros((4, 4), np.float32), {}, r"shape \(height, width, channels\), got float32 \(4, 4\)"),
    (np.zeros((4, 4, 5), np.float32), {}, "5 channels needs channels="),
    (np.zeros((4, 4, 3), np.float32), {"channels": ["R", "R", "B"]}, "must name each of the array's 3 channels"),
    (np.zeros((4, 4, 3), np.float32), {"out": np.zeros((4, 4, 3), np.float16)}, "out= must be a float32 array"),
    (np.zeros((4, 4, 2), np.float32), {"channels": ["Z", "Y"]}, "colour operations need R, G and B channels"),
], ids=["float64", "two_dims", "unnamed", "duplicate_names", "wrong_out", "no_rgb"])
def test_an_array_it_cannot_take_is_a_usage_error_saying_why(pixels: np.ndarray, kwargs: dict, words: str):
    with pytest.raises(oxi.UsageError, match=words):
        oxi.apply(pixels, GRADE, backend="cpu", **kwargs)


def test_an_image_keeps_its_parts_attributes_and_windows_as_process_writes_them(tmp_path: Path):
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(40, 60), shot="sh010", exposure=1.5)
    chain = GRADE | oxi.Resize("32x32")
    oxi.process(plate, tmp_path / "out.exr", chain, backend="cpu")
    image = oxi.read(plate)
    got = oxi.apply(image, chain, backend="cpu")
    written = oxi.read(tmp_path / "out.exr")
    assert (got.width, got.height, got.channels) == (written.width, written.height, written.channels)
    assert got.meta.windows == written.meta.windows == ((0, 5, 32, 21), (0, 0, 32, 32))
    assert got.meta.header["shot"] == "sh010" and got.meta.pixel_types == written.meta.pixel_types
    for name in written.channels:
        np.testing.assert_array_equal(got.planes[name], written.planes[name])
    got.planes["R"][...] = 0  # nothing of the result is the input's
    got.meta.header["shot"] = "changed"
    assert image.meta.header["shot"] == "sh010" and oxi.read(plate).planes["R"].tobytes() == image.planes["R"].tobytes()


def test_read_write_and_arrays_round_trip_what_the_file_carries(tmp_path: Path):
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(12, 20), shot="sh010")
    image = oxi.read(plate)
    pixels = oxi.to_array(image, ["R", "G", "B"])
    assert pixels.dtype == np.float16 and pixels.shape == (12, 20, 3)
    graded = oxi.from_array(oxi.apply(pixels, GRADE, backend="cpu"), like=image)
    oxi.write(graded, tmp_path / "graded.exr")
    again = oxi.read(tmp_path / "graded.exr")
    assert again.meta.header["shot"] == "sh010" and again.meta.pixel_types == {"R": "half", "G": "half", "B": "half"}
    oxi.write(graded, tmp_path / "graded.exr", out_type="float")  # replaces it, atomically
    assert oxi.read(tmp_path / "graded.exr").planes["R"].dtype == np.float32
    with pytest.raises(oxi.InputError, match="nope.exr"):
        oxi.read(tmp_path / "nope.exr")


def test_a_named_kind_is_opened_once_and_kept_for_later_calls():
    pixels = ref.hdr_image((8, 8, 3), seed=4)
    oxi.apply(pixels, GRADE, backend="cpu")
    held = devices._HELD[("cpu", None, None)]
    oxi.apply(pixels, GRADE, backend="cpu")
    assert devices._HELD[("cpu", None, None)] is held


# --- each accelerator agrees with the host -------------------------------------------------------------------


@pytest.fixture(scope="module", params=under_test.accelerator_names())
def accelerator(request) -> oxi.Backend:
    """Each registered backend but the host, as the API opens it."""
    try:
        return oxi.open_backend(request.param)
    except oxi.BackendUnavailable as e:
        under_test.unavailable(kind(request.param).label, e)


def _op(step: oxi.Op, width: int, height: int) -> Any:
    return oxi.Chain([step])._compiled().ops_for(width, height, False)[0]


@pytest.mark.parametrize("nonfinite", [False, True], ids=["finite", "nan_inf"])
def test_each_accelerator_applies_a_cdl_and_a_matrix_as_the_host(accelerator: oxi.Backend, nonfinite: bool):
    img = ref.hdr_image((23, 37, 4), seed=7, nonfinite=nonfinite)
    want, got = oxi.apply(img, GRADE, backend=HOST), oxi.apply(img, GRADE, backend=accelerator)
    assert_close(got, want, rtol=RTOL, scale=_cdl_scale(_op(GRADE, 37, 23), img), atol=FLT_MIN, inputs=img,
                 what="cdl")
    op = _op(MATRIX, 37, 23)
    _, terms = ref.matrix(_finite(np.concatenate([img[..., :3], np.ones((23, 37, 1), np.float32)], -1)), op.array,
                          op.offset)
    scale = np.ones(img.shape)
    scale[..., :3] = terms[..., :3]
    want, got = oxi.apply(img, MATRIX, backend=HOST), oxi.apply(img, MATRIX, backend=accelerator)
    assert_close(got, want, rtol=RTOL, scale=scale, atol=FLT_MIN, inputs=img, what="matrix")


@pytest.mark.parametrize("nonfinite", [False, True], ids=["finite", "nan_inf"])
def test_each_accelerator_applies_a_resize_and_a_blur_as_the_host(accelerator: oxi.Backend, nonfinite: bool):
    img = ref.hdr_image((29, 41, 4), seed=9, nonfinite=nonfinite)
    cases = [(oxi.Resize("60x31", fit="stretch"), ref.resize_weights(29, 31, "lanczos3")[0],
              ref.resize_weights(41, 60, "lanczos3")[0]),
             (oxi.Blur(1.5), ref.blur_weights(29, 1.5)[0], ref.blur_weights(41, 1.5)[0])]
    for step, wy, wx in cases:
        want, got = oxi.apply(img, step, backend=HOST), oxi.apply(img, step, backend=accelerator)
        assert_close(got, want, rtol=RTOL, scale=ref.separable_magnitude(_finite(img), wy, wx), atol=FLT_MIN,
                     what=repr(step))


def test_an_aces_2_view_on_an_array_renders_as_ocio_on_the_host_and_each_accelerator(accelerator: oxi.Backend):
    """Each backend's code values within the views' stated tolerance of OCIO's (test_aces2_matches_ocio.py:
    1e-4, plus the float32 rounding allowance near black), NaN and Inf where OCIO puts them."""
    import PyOpenColorIO as OCIO

    from tests.color.oracle import ocio_reference
    from tests.color.test_aces2_matches_ocio import VIEW_ATOL, _hdr, _rounding_allowance

    config, display, view = "ocio://studio-config-latest", "sRGB - Display", "ACES 2.0 - SDR 100 nits (Rec.709)"
    img = _hdr((64, 64), seed=28)
    processor = OCIO.Config.CreateFromFile(config).getProcessor(
        OCIO.DisplayViewTransform(src="ACEScg", display=display, view=view))
    want = ocio_reference(processor, img)
    for backend in (HOST, accelerator):
        got = oxi.apply(img, oxi.Display("ACEScg", display, view, config=config), backend=backend)
        allowed = np.full(img.shape, VIEW_ATOL)
        with np.errstate(invalid="ignore"):
            loose = (np.abs(got - want) > VIEW_ATOL).any(axis=-1)
        if loose.any():
            allowed[loose] += _rounding_allowance(processor, img, loose)
        assert_close(got, want, rtol=0.0, atol=allowed, inputs=img, what=f"{view} on {backend}")
