"""Movie settings as users write them (codecs, rates, timecodes, burn-ins) and Y'CbCr against BT.709's equations."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from oxi_cli.errors import UsageError
from oxi_cli.io.movie import (
    CODECS,
    DISPLAYS,
    Burn,
    add_frames,
    codec_for,
    display_for,
    frames_to_timecode,
    movie_settings,
    parse_burn,
    parse_fps,
)
from oxi_cli.io.movie_pixels import Converter


@pytest.mark.parametrize(("text", "rate"), [("24", Fraction(24)), ("23.976", Fraction(24000, 1001)),
                                            ("29.97", Fraction(30000, 1001)), ("59.94", Fraction(60000, 1001)),
                                            ("25", Fraction(25)), ("24000/1001", Fraction(24000, 1001)),
                                            ("48", Fraction(48))])
def test_fps_reads_rates_as_editors_write_them(text, rate):
    assert parse_fps(text) == rate


@pytest.mark.parametrize("text", ["0", "-24", "fast", "1/0", "1000"])
def test_a_rate_out_of_reach_is_refused(text):
    with pytest.raises(UsageError, match="--fps"):
        parse_fps(text)


def test_timecodes_count_the_nominal_rate():
    assert frames_to_timecode(1001, Fraction(24)) == "00:00:41:17"
    assert frames_to_timecode(1001, Fraction(24000, 1001)) == "00:00:41:17"
    assert frames_to_timecode(86400 * 24, Fraction(24)) == "00:00:00:00"  # wraps at 24 hours
    assert add_frames("01:00:59:23", 1, Fraction(24)) == "01:01:00:00"
    assert add_frames("01:00:00;29", 1, Fraction(30000, 1001)) == "01:00:01;00"


def test_codecs_by_the_names_users_say_and_defaults_per_container():
    assert codec_for(None, "mov").name == "prores_hq" and codec_for(None, "mp4").name == "h264"
    assert codec_for("ProRes-4444", "mov").alpha and codec_for("hevc", "mp4").name == "h265"
    with pytest.raises(UsageError, match="did you mean"):
        codec_for("prores_hd", "mov")
    with pytest.raises(UsageError, match="goes in a .mov"):
        codec_for("dnxhr_hq", "mp4")


def test_quality_is_a_rate_factor_of_h264_and_h265_only(tmp_path):
    assert movie_settings(tmp_path / "a.mp4", None, 23, None).crf == 23
    assert movie_settings(tmp_path / "a.mp4", "h265", None, None).crf == 20
    with pytest.raises(UsageError, match="fixed quality"):
        movie_settings(tmp_path / "a.mov", None, 20, None)
    with pytest.raises(UsageError, match="0..51"):
        movie_settings(tmp_path / "a.mp4", None, 70, None)


def test_burn_ins_take_a_place_and_known_fields():
    assert parse_burn("{shot}  {frame}") == Burn("{shot}  {frame}", "bottom-left")
    assert parse_burn("top-right:{timecode}") == Burn("{timecode}", "top-right")
    assert parse_burn("top:TC {timecode}") == Burn("TC {timecode}", "top")
    with pytest.raises(UsageError, match="unknown"):
        parse_burn("{reel}")


def test_a_display_without_tags_is_refused_by_name():
    with pytest.raises(UsageError, match="cannot describe"):
        display_for("g26_p3d65_display", "the picture")
    assert display_for("ocio:srgb_rec709_display", "the picture").transfer == 13


def _bt709_reference(rgb: np.ndarray, bits: int) -> tuple[np.ndarray, ...]:
    """Rec. ITU-R BT.709-6 items 3.2-3.5 in float64: E'Y, E'CB, E'CR and their limited-range quantisation."""
    r, g, b = (rgb[..., i].astype(np.float64) for i in range(3))
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    cb, cr = (b - y) / 1.8556, (r - y) / 1.5748
    scale = 2 ** (bits - 8)
    return (219 * y + 16) * scale, (224 * cb + 128) * scale, (224 * cr + 128) * scale


@pytest.mark.parametrize("codec", ["prores_4444", "dnxhr_444"])
def test_ycbcr_follows_bt709_to_within_the_dither(codec):
    rng = np.random.default_rng(3)
    rgb = rng.random((36, 50, 3), dtype=np.float32)
    conv = Converter(CODECS[codec], DISPLAYS["g24_rec709_display"], 50, 36)
    got = conv.planes(rgb, None, 0)[:3]
    for plane, ref in zip(got, _bt709_reference(rgb, 10), strict=True):
        error = plane.astype(np.float64) - ref
        assert np.abs(error).max() <= 1.5  # rounding plus triangular dither of +-1 code value
        assert abs(error.mean()) < 0.05  # the dither adds no bias


def test_chroma_of_4_2_2_is_the_filtered_even_columns():
    flat = np.full((4, 6, 3), 0.25, dtype=np.float32)
    flat[:, :, 2] = 0.75
    conv = Converter(CODECS["prores_hq"], DISPLAYS["g24_rec709_display"], 6, 4)
    y, cb, cr = conv.planes(flat, None, 0)
    assert y.shape == (4, 6) and cb.shape == cr.shape == (4, 3)
    _, ref_cb, ref_cr = _bt709_reference(flat[:, ::2], 10)
    assert np.abs(cb - ref_cb).max() <= 1.5 and np.abs(cr - ref_cr).max() <= 1.5


def test_the_python_api_refuses_a_movie_output_rather_than_make_a_folder_of_it(tmp_path):
    import oxi_cli as oxi

    frame = tmp_path / "plate.exr"
    frame.write_bytes(b"")  # never read: the output is refused first
    with pytest.raises(UsageError, match="is a movie, which the oxi command writes"):
        oxi.process(str(frame), tmp_path / "review.mov", oxi.Cdl(slope=(1.1, 1.0, 1.0)))
    assert not (tmp_path / "review.mov").exists()
