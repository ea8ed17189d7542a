"""Frame sequences: output patterns; a missing frame fails the batch (exit 1) with or without --frames, and is
named once, as a compact range list."""

from __future__ import annotations

from pathlib import Path

from tests.batch.helpers import by_input, exr_folder, listing, records
from tests.cli.conftest import run_oxi


def sequence(folder: Path, frames: list[int], pattern: str = "plate.{:04d}.exr") -> None:
    exr_folder(folder, [pattern.format(f) for f in frames], size=(12, 20))


def test_sequence_with_a_gap_writes_every_frame_on_disk_and_fails_naming_the_gap_once(tmp_path: Path):
    sequence(tmp_path / "plates", [1001, 1002, 1003, 1006, 1007])
    out = tmp_path / "out"
    res = run_oxi("cdl", str(tmp_path / "plates" / "plate.####.exr"), "-o", str(out / "graded.%05d.exr"),
                  "--slope", "1.2", "--json")
    assert res.returncode == 1, res.stderr  # the output sequence has a hole: scripts must see it
    assert listing(out) == [f"graded.{f:05d}.exr" for f in (1001, 1002, 1003, 1006, 1007)]
    assert "missing frames: 1004-1005 (2 frames)" in res.stderr
    assert res.stderr.count("1004") == 1
    recs = records(res.stdout)
    assert sorted(r["frame"] for r in recs) == [1001, 1002, 1003, 1004, 1005, 1006, 1007]
    assert {r["frame"]: r["status"] for r in recs if r["status"] != "ok"} == {1004: "missing", 1005: "missing"}


def test_the_same_gap_exits_the_same_with_and_without_frames(tmp_path: Path):
    sequence(tmp_path, [1001, 1002, 1004])
    seq = str(tmp_path / "plate.####.exr")
    found = run_oxi("cdl", seq, "-o", str(tmp_path / "a"), "--slope", "1.1")
    asked = run_oxi("cdl", seq, "-o", str(tmp_path / "b"), "--slope", "1.1", "--frames", "1001-1004")
    assert found.returncode == asked.returncode == 1
    assert "missing frames: 1003 (1 frame)" in found.stderr and "missing frames: 1003 (1 frame)" in asked.stderr


def test_missing_frames_on_a_step_are_one_range_said_once(tmp_path: Path):
    sequence(tmp_path, [1001, 1003])
    res = run_oxi("cdl", str(tmp_path / "plate.####.exr"), "-o", str(tmp_path / "o"), "--slope", "1.1",
                  "--frames", "1001-1099x2")
    assert res.returncode == 1
    assert "missing frames: 1005-1099x2 (48 frames)" in res.stderr
    assert res.stderr.count("1005") == 1


def test_frames_range_with_step_picks_frames_and_fails_on_the_absent_one(tmp_path: Path):
    sequence(tmp_path, [1, 3, 5, 9], "shot_v2.{}.exr")
    out = tmp_path / "out"
    res = run_oxi("blur", str(tmp_path / "shot_v2.%d.exr"), "-o", str(out), "--frames", "1-7x2", "--sigma", "1",
                  "--name", "{base}_soft.{frame:04d}{ext}", "--json")
    assert res.returncode == 1  # frame 7 was asked for and is not there
    assert listing(out) == ["shot_v2_soft.0001.exr", "shot_v2_soft.0003.exr", "shot_v2_soft.0005.exr"]
    recs = by_input(res.stdout)
    assert recs["shot_v2.7.exr"]["status"] == "missing"
    assert "missing frames: 7 (1 frame)" in res.stderr


def test_in_out_form_takes_a_sequence_and_an_output_pattern(tmp_path: Path):
    sequence(tmp_path, [10, 11])
    res = run_oxi("resize", str(tmp_path / "plate.#.exr"), str(tmp_path / "half" / "plate.#.exr"), "--scale", "0.5")
    assert res.returncode == 0, res.stderr
    assert listing(tmp_path / "half") == ["plate.0010.exr", "plate.0011.exr"]
