"""Every usage mistake is one `oxi: error:` line and exit 2: option values Click rejects, numbers float32 cannot
hold, thread counts the machine cannot start, GPU indexes that do not exist, and outputs that cannot be what
the inputs need."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.conftest import run_oxi
from tests.cli.test_cli_errors import assert_one_line_error


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--sat", "abc"], ("--sat", "'abc'")),
        (["--sat", "1.1", "--jobs", "0"], ("--jobs",)),
        (["--sat", "1.1", "--threads", "-1"], ("--threads",)),
        (["--sat", "1.1", "--device", "x"], ("--device",)),
        (["--sat", "1.1", "--no-such-flag"], ("--no-such-flag",)),
    ],
)
def test_option_values_click_rejects_are_one_line_not_a_usage_box(plate: Path, tmp_path: Path, args, words):
    res = run_oxi("cdl", str(plate), str(tmp_path / "o.exr"), *args)
    assert_one_line_error(res, 2, "oxi: error:", *words)
    assert "╭" not in res.stderr and "Usage:" not in res.stderr


def test_a_missing_required_option_is_one_line(plate: Path, tmp_path: Path):
    assert_one_line_error(run_oxi("lut3d", str(plate), str(tmp_path / "o.exr")), 2, "--lut")


@pytest.mark.parametrize(
    "args",
    [
        ["cdl", "--slope", "1e39"],
        ["cdl", "--sat", "1e39"],
        ["cdl", "--offset", "-1e39"],
        ["matrix", "--matrix", "1e39,0,0,0,1,0,0,0,1"],
        ["matrix", "--matrix", "1,0,0,0,1,0,0,0,1", "--offset", "4e38,0,0"],
        ["run", "--cdl", "slope=1e39"],
    ],
)
def test_numbers_beyond_float32_are_usage_errors_and_nothing_is_written(plate: Path, tmp_path: Path, args):
    out = tmp_path / "o.exr"
    res = run_oxi(args[0], str(plate), str(out), *args[1:])
    assert_one_line_error(res, 2, "float32")
    assert "RuntimeWarning" not in res.stderr and not out.exists()


def test_thread_counts_beyond_four_per_core_are_refused_before_any_pool_starts(plate: Path, tmp_path: Path):
    top = 4 * (os.cpu_count() or 1)
    res = run_oxi("cdl", str(plate), str(tmp_path / "o.exr"), "--sat", "1.1", "--threads", "10000")
    assert_one_line_error(res, 2, "--threads", f"1..{top}")


def test_a_gpu_index_is_checked_even_when_there_is_nothing_to_compute(plate: Path, tmp_path: Path):
    out = tmp_path / "o.exr"
    assert_one_line_error(run_oxi("run", str(plate), str(out), "--backend", "gpu", "--device", "63"), 2, "oxi probe")
    assert_one_line_error(run_oxi("run", str(plate), str(out), "--device", "-1"), 2, "--device")
    assert not out.exists()


def test_cdl_without_a_file_or_any_value_is_refused_not_a_silent_copy(plate: Path, tmp_path: Path):
    out = tmp_path / "o.exr"
    assert_one_line_error(run_oxi("cdl", str(plate), str(out)), 2, "--cdl FILE", "oxi run IN OUT")
    assert not out.exists()


def test_a_ccc_with_several_corrections_needs_an_id_and_the_error_lists_them(plate: Path, tmp_path: Path):
    ccc = tmp_path / "shots.ccc"
    sop = "<SOPNode><Slope>1.1 1 1</Slope><Offset>0 0 0</Offset><Power>1 1 1</Power></SOPNode>"
    cc = '<ColorCorrection id="{}">' + sop + "</ColorCorrection>"
    ccc.write_text(f"<ColorCorrectionCollection>{cc.format('sh010')}{cc.format('sh020')}</ColorCorrectionCollection>")
    out = tmp_path / "o.exr"
    assert_one_line_error(run_oxi("cdl", str(plate), str(out), "--cdl", str(ccc)), 2, "sh010, sh020", "--id")
    assert not out.exists()
    assert run_oxi("cdl", str(plate), str(out), "--cdl", str(ccc), "--id", "sh020").returncode == 0


def test_name_without_an_output_folder_says_name_needs_one(plate: Path, tmp_path: Path):
    res = run_oxi("cdl", str(plate), str(tmp_path / "o.exr"), "--slope", "1.1", "--name", "{stem}_x{ext}")
    assert_one_line_error(res, 2, "--name", "-o FOLDER")
    assert "several inputs" not in res.stderr


def test_a_folder_input_with_a_file_output_names_the_folder(plate: Path, tmp_path: Path):
    shots = tmp_path / "shots"
    shots.mkdir()
    (shots / "a.exr").write_bytes(plate.read_bytes())
    res = run_oxi("cdl", f"{shots}/", str(tmp_path / "o.exr"), "--slope", "1.1")
    assert_one_line_error(res, 2, "is a folder of inputs", "-o FOLDER")
    assert not (tmp_path / "o.exr").exists()


@pytest.mark.parametrize(
    ("out", "out_type", "words"),
    [
        ("o.exr", "uint8", ("EXR outputs store half, float or uint32, not uint8", "--out-type half or float")),
        ("o.png", "float", ("PNG outputs store uint16 or uint8, not float",)),
        ("o.jpg", "uint16", ("JPEG outputs store uint8, not uint16", "--out-type uint8")),
    ],
)
def test_an_out_type_the_output_format_cannot_store_is_the_error_alone(plate: Path, tmp_path: Path, out, out_type,
                                                                       words):
    res = run_oxi("cdl", str(plate), str(tmp_path / out), "--slope", "1.1", "--out-type", out_type)
    assert_one_line_error(res, 2, *words)
    assert "warning" not in res.stderr and not (tmp_path / out).exists()
