"""Names as users type them: a shortened view answered with the views it may mean, the config's displays, views
and looks listed where users look (`oxi display --list`), a mistyped flag answered with the one it meant, and
the colour-space names oiiotool users type (`sRGB`, `linear`) taken as oiiotool takes them, saying so."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from tests.cli.conftest import hdr_rgba, read_exr, run_oxi
from tests.cli.test_cli_errors import assert_one_line_error

STUDIO = "ocio://studio-config-latest"
SDR_VIEW = "ACES 2.0 - SDR 100 nits (Rec.709)"


def test_a_shortened_view_is_answered_with_the_views_it_may_mean(plate: Path, tmp_path: Path):
    res = run_oxi("display", str(plate), str(tmp_path / "o.png"), "--from", "ACEScg", "--display", "sRGB - Display",
                  "--view", "ACES 2.0")
    assert_one_line_error(res, 2, "unknown view", f"closest: {SDR_VIEW}", "oxi display --list")


def test_a_view_like_none_of_them_is_answered_with_the_display_s_views(plate: Path, tmp_path: Path):
    res = run_oxi("display", str(plate), str(tmp_path / "o.png"), "--from", "ACEScg", "--display", "sRGB - Display",
                  "--view", "zzz")
    assert_one_line_error(res, 2, "unknown view", "it has", SDR_VIEW, "Un-tone-mapped", "Raw")


def test_display_list_shows_the_displays_their_views_and_the_looks():
    res = run_oxi("display", "--list", "--config", STUDIO)
    assert res.returncode == 0, res.stderr
    assert "displays and views:\n  sRGB - Display\n    " + SDR_VIEW in res.stdout
    assert "looks:\n  ACES 1.3 Reference Gamut Compression" in res.stdout
    one = run_oxi("display", "--list", "--json", "--display", "srgb - display", "--config", STUDIO)
    assert one.returncode == 0, one.stderr
    doc = json.loads(one.stdout)
    assert list(doc["displays"]) == ["sRGB - Display"] and SDR_VIEW in doc["displays"]["sRGB - Display"]


@pytest.mark.parametrize(("typed", "meant"), [("--slop", "--slope"), ("--satt", "--sat"), ("--quite", "--quiet")])
def test_a_mistyped_flag_is_answered_with_the_flag_it_meant_alone(plate: Path, tmp_path: Path, typed: str,
                                                                   meant: str):
    res = run_oxi("cdl", str(plate), str(tmp_path / "o.exr"), typed, "1.1")
    assert_one_line_error(res, 2, f"no such option: {typed}; did you mean {meant}?")
    assert "--help" not in res.stderr.split("(see")[0]


def _oiiotool() -> str:
    found = shutil.which("oiiotool")
    assert found, "oiiotool (the test extras' openimageio) is the reference for oiiotool's names"
    return found


def _float_plate(tmp_path: Path) -> Path:
    rgba = hdr_rgba(24, 32, seed=5)
    path = tmp_path / "float.exr"
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}
    OpenEXR.File(header, {c: np.ascontiguousarray(rgba[..., i]) for i, c in enumerate("RGB")}).write(str(path))
    return path


@pytest.mark.parametrize("config", ["ocio://default", STUDIO])
@pytest.mark.parametrize(("source", "target"), [("linear", "sRGB"), ("ACEScg", "sRGB"), ("sRGB", "linear")])
def test_oiiotool_s_names_convert_as_oiiotool_converts(tmp_path: Path, config: str, source: str, target: str):
    src = _float_plate(tmp_path)
    ours, theirs = tmp_path / "oxi.exr", tmp_path / "oiio.exr"
    res = run_oxi("colorspace", str(src), str(ours), "--from", source, "--to", target, "--config", config)
    assert res.returncode == 0, res.stderr
    subprocess.run([_oiiotool(), "--colorconfig", config, str(src), "--colorconvert", source, target, "-d", "float",
                    "-o", str(theirs)], check=True, capture_output=True, timeout=300)
    got, want = read_exr(ours)[1], read_exr(theirs)[1]
    # oiiotool runs OCIO's default optimisation, whose fast pow is ~2.5e-5 relative off (oxi's is LOSSLESS).
    for c in "RGB":
        np.testing.assert_allclose(got[c], want[c], rtol=5e-5, atol=2e-6, err_msg=c)


def test_the_space_a_common_name_is_taken_as_is_said_once_and_not_with_quiet(plate: Path, tmp_path: Path):
    res = run_oxi("colorspace", str(plate), str(tmp_path / "o.exr"), "--from", "ACEScg", "--to", "sRGB")
    assert res.returncode == 0, res.stderr
    assert res.stderr == ("oxi: colour space 'sRGB' is taken as 'sRGB Encoded Rec.709 (sRGB)', the config's only "
                          "space by that common name\n")
    quiet = run_oxi("colorspace", str(plate), str(tmp_path / "q.exr"), "--from", "ACEScg", "--to", "sRGB", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
    named = run_oxi("colorspace", str(plate), str(tmp_path / "n.exr"), "--from", "ACEScg", "--to", "sRGB - Texture")
    assert named.returncode == 0 and named.stderr == ""  # the config's own name: nothing to say
    assert read_exr(tmp_path / "o.exr")[1]["R"].tobytes() == read_exr(tmp_path / "n.exr")[1]["R"].tobytes()


def test_run_steps_take_the_common_names_too(plate: Path, tmp_path: Path):
    res = run_oxi("run", str(plate), "-o", str(tmp_path / "o.exr"), "--colorspace", "linear:sRGB")
    assert res.returncode == 0, res.stderr
    assert "'linear' is taken as 'Linear Rec.709 (sRGB)'" in res.stderr


def test_a_common_name_two_spaces_may_answer_to_is_refused_naming_both(plate: Path, tmp_path: Path):
    res = run_oxi("colorspace", str(plate), str(tmp_path / "o.exr"), "--from", "linear", "--to", "Rec709",
                  "--config", STUDIO)
    assert_one_line_error(res, 2, "'Rec709' is ambiguous", "'Camera Rec.709'", "'Gamma 2.4 Encoded Rec.709'")
