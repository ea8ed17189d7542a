"""Bad input gets one clear stderr line and a non-zero exit code, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import run_oxi


def assert_one_line_error(res, code: int, *words: str) -> None:
    assert res.returncode == code, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_missing_input_file(tmp_path: Path):
    assert_one_line_error(run_oxi("cdl", str(tmp_path / "nope.exr"), str(tmp_path / "o.exr"), "--sat", "1.1"),
                          2, "nope.exr")


def test_truncated_exr(plate: Path, tmp_path: Path):
    bad = tmp_path / "cut.exr"
    bad.write_bytes(plate.read_bytes()[: plate.stat().st_size // 2])
    assert_one_line_error(run_oxi("cdl", str(bad), str(tmp_path / "o.exr"), "--sat", "1.1"), 2, "cut.exr")
    assert not (tmp_path / "o.exr").exists()


def test_text_file_named_exr(tmp_path: Path):
    bad = tmp_path / "notes.exr"
    bad.write_text("this is not an image\n")
    assert_one_line_error(run_oxi("blur", str(bad), str(tmp_path / "o.exr"), "--sigma", "1"), 2, "notes.exr")


def test_cube_with_too_few_rows(plate: Path, tmp_path: Path):
    cube = tmp_path / "short.cube"
    cube.write_text("LUT_3D_SIZE 2\n" + "0 0 0\n" * 7)
    assert_one_line_error(run_oxi("lut3d", str(plate), str(tmp_path / "o.exr"), "--lut", str(cube)),
                          2, "short.cube")


def test_cube_with_nan(plate: Path, tmp_path: Path):
    cube = tmp_path / "nan.cube"
    cube.write_text("LUT_3D_SIZE 2\n" + "0 0 0\n" * 6 + "nan 0 0\n1 1 1\n")
    assert_one_line_error(run_oxi("lut3d", str(plate), str(tmp_path / "o.exr"), "--lut", str(cube)),
                          2, "nan.cube")


def test_slope_with_two_numbers(plate: Path, tmp_path: Path):
    assert_one_line_error(run_oxi("cdl", str(plate), str(tmp_path / "o.exr"), "--slope", "1,2"), 2, "--slope")


@pytest.mark.parametrize("size", ["0x0", "banana", "50", "-5x5"])
def test_bad_resize_size(plate: Path, tmp_path: Path, size: str):
    assert_one_line_error(run_oxi("resize", str(plate), str(tmp_path / "o.exr"), "--size", size), 2, "--size")


def test_negative_power_is_refused(plate: Path, tmp_path: Path):
    assert_one_line_error(run_oxi("cdl", str(plate), str(tmp_path / "o.exr"), "--power", "-1"), 2, "power")


def test_unknown_output_extension(plate: Path, tmp_path: Path):
    res = run_oxi("cdl", str(plate), str(tmp_path / "o.xyz"), "--sat", "1.1")
    assert_one_line_error(res, 2, "o.xyz")


def test_debug_shows_the_traceback(tmp_path: Path):
    res = run_oxi("cdl", str(tmp_path / "nope.exr"), str(tmp_path / "o.exr"), "--debug")
    assert res.returncode != 0 and "Traceback" in res.stderr
