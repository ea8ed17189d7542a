"""Ops refuse bad parameters when built, with one clear OpError line naming the parameter and the value."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from oxi_cli.errors import OpError, UsageError
from oxi_cli.ops import Blur, Cdl, Lut1d, Lut3d, Matrix, Resize
from oxi_cli.ops.resize import Frame, SizeSpec, fit_frame, parse_size

NAN, INF = float("nan"), float("inf")


def _lut3d(n: int) -> np.ndarray:
    # np.zeros is lazily mapped: a 257³ table costs nothing until touched, and validation must reject
    # it by shape before touching it.
    return np.zeros((n, n, n, 3), dtype=np.float32)


def _ramp(n: int) -> np.ndarray:
    return np.repeat(np.linspace(0.0, 1.0, n, dtype=np.float32)[:, None], 3, axis=1)


def _with_nan(table: np.ndarray) -> np.ndarray:
    table = table.copy()
    table.reshape(-1)[5] = NAN
    return table


# id -> (builder, regex the message must match)
BAD: dict[str, tuple[Callable[[], object], str]] = {
    "cdl_nan_slope": (lambda: Cdl(slope=(1.0, NAN, 1.0)), r"slope.*finite.*nan"),
    "cdl_inf_offset": (lambda: Cdl(offset=INF), r"offset.*finite.*inf"),
    "cdl_negative_power": (lambda: Cdl(power=(1.0, -0.5, 1.0)), r"power.*> 0.*-0\.5"),
    "cdl_zero_power": (lambda: Cdl(power=0.0), r"power.*> 0"),
    "cdl_negative_slope": (lambda: Cdl(slope=-1.0), r"slope.*>= 0.*-1"),
    "cdl_negative_sat": (lambda: Cdl(sat=-0.1), r"saturation.*>= 0.*-0\.1"),
    "cdl_nan_sat": (lambda: Cdl(sat=NAN), r"sat.*finite"),
    "cdl_two_numbers": (lambda: Cdl(slope=(1.0, 2.0)), r"slope.*1 or 3 numbers.*2"),
    "cdl_unknown_style": (lambda: Cdl(style="log"), r"style.*noclamp.*asc.*log"),
    "lut3d_size_1": (lambda: Lut3d(_lut3d(1)), r"3D LUT size.*2\.\.256.*1"),
    "lut3d_size_257": (lambda: Lut3d(_lut3d(257)), r"3D LUT size.*2\.\.256.*257"),
    "lut3d_not_a_cube": (
        lambda: Lut3d(np.zeros((4, 4, 5, 3), np.float32)),
        r"\(N, N, N, 3\).*\(4, 4, 5, 3\)",
    ),
    "lut3d_nan_entry": (lambda: Lut3d(_with_nan(_lut3d(2))), r"3D LUT.*NaN"),
    "lut3d_empty_domain": (
        lambda: Lut3d(_lut3d(2), domain_min=(0, 0, 1), domain_max=(1, 1, 1)),
        r"domain max.*must exceed.*domain min",
    ),
    "lut3d_rows_short": (lambda: Lut3d.from_red_fastest(np.zeros((26, 3)), 3), r"size 3 needs 27 rows.*26"),
    "lut1d_size_1": (lambda: Lut1d(_ramp(1)), r"1D LUT size.*2\.\..*1"),
    "lut1d_nan_entry": (lambda: Lut1d(_with_nan(_ramp(4))), r"1D LUT.*NaN"),
    "matrix_ten_numbers": (lambda: Matrix.from_values([1.0] * 10), r"9, 12 or 16 numbers.*10"),
    "matrix_nan": (lambda: Matrix.from_values([1.0, 0, 0, 0, NAN, 0, 0, 0, 1]), r"matrix.*finite.*nan"),
    "matrix_bad_offset": (lambda: Matrix.from_values([1.0] * 9, offset=(1.0, 2.0)), r"offset.*3 or 4.*2"),
    "resize_zero_width": (lambda: Resize(0, 10), r"width.*1\.\..*got 0"),
    "resize_negative_height": (lambda: Resize(10, -3), r"height.*1\.\..*-3"),
    "resize_fractional_width": (lambda: Resize(2.5, 10), r"width.*integer.*2\.5"),
    "resize_unknown_filter": (lambda: Resize(10, 10, "bicubic"), r"unknown filter.*bicubic.*lanczos3"),
    "blur_zero_sigma": (lambda: Blur(0.0), r"sigma.*\(0, .*got 0"),
    "blur_negative_sigma": (lambda: Blur(-1.0), r"sigma.*-1"),
    "blur_nan_sigma": (lambda: Blur(NAN), r"sigma.*nan"),
    "blur_zero_radius": (lambda: Blur.from_radius(0.0), r"radius.*positive.*0"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_parameters_raise_one_line_op_error(case):
    build, pattern = BAD[case]
    with pytest.raises(OpError, match=pattern) as info:
        build()
    message = str(info.value)
    assert "\n" not in message, f"error must be one line: {message!r}"
    assert isinstance(info.value, UsageError) and info.value.exit_code == 2


def test_good_parameters_build():
    # The boundaries just inside the limits are accepted (so the cases above fail for the stated reason).
    assert Cdl(slope=(0.0, 1.0, 2.0), power=1e-6, sat=0.0, style="asc").power == (1e-6,) * 3
    assert Lut3d(np.ones((2, 2, 2, 3), np.float32)).size == 2
    assert Lut1d(_ramp(2)).size == 2
    assert Resize(1, 1).out_size(640, 480) == (1, 1)
    assert Blur(1e-3).radius == 1
    assert Blur.from_radius(1.0).sigma == pytest.approx(1 / 3)
    assert Matrix.from_values([1.0] * 12).offset == (1.0, 1.0, 1.0, 0.0)


@pytest.mark.parametrize("make", [lambda: Cdl(slope=(1e39, 1, 1)), lambda: Cdl(sat=-4e38),
                                  lambda: Matrix.from_values([1e39] + [0.0] * 8)])
def test_parameters_beyond_float32_are_refused(make):
    with pytest.raises(OpError, match="float32"):
        make()


@pytest.mark.parametrize(
    ("src", "box", "frame"),
    [  # measured with oiiotool 3.2 --fit: (picture w, h, data-window origin x, y)
        ((400, 200), (100, 100), (100, 50, 0, 25)),
        ((400, 200), (100, 75), (100, 50, 0, 12)),
        ((400, 200), (333, 101), (202, 101, 65, 0)),
        ((400, 200), (101, 333), (101, 51, 0, 141)),
    ],
)
def test_fit_places_the_picture_as_oiiotool_fit_does(src, box, frame):
    f = fit_frame(*src, *box, "fit")
    assert (f.width, f.height, f.x, f.y) == frame and (f.box_width, f.box_height) == box


def test_fill_covers_the_box_and_stretch_is_the_box():
    f = fit_frame(400, 200, 100, 100, "fill")
    assert (f.width, f.height, f.x, f.y) == (200, 100, -50, 0)
    assert fit_frame(400, 200, 100, 100, "stretch") == Frame(100, 100, 0, 0, 100, 100)


@pytest.mark.parametrize(("text", "spec"), [("1920x1080", SizeSpec(1920, 1080)), ("1920x0", SizeSpec(1920, 0)),
                                            ("0X1080", SizeSpec(0, 1080)), ("50%", SizeSpec(scale=0.5)),
                                            (" 12.5 % ", SizeSpec(scale=0.125))])
def test_the_size_syntax(text, spec):
    assert parse_size(text) == spec


@pytest.mark.parametrize("text", ["50", "0.5", 2, "0x0", "x", "-50%", "50%%", "1e400%"])
def test_sizes_that_are_not_the_syntax_are_usage_errors(text):
    with pytest.raises(UsageError):
        parse_size(text)


def test_scale_options_read_a_bare_number_as_a_factor():
    assert parse_size("0.5", "--scale", bare_is_scale=True) == SizeSpec(scale=0.5)
