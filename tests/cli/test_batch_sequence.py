"""Frame sequences: output patterns, gaps reported, --frames asking for missing frames fails."""

from __future__ import annotations

from pathlib import Path

from tests.batch.helpers import by_input, exr_folder, listing, records
from tests.cli.conftest import run_oxi


def sequence(folder: Path, frames: list[int], pattern: str = "plate.{:04d}.exr") -> None:
    exr_folder(folder, [pattern.format(f) for f in frames], size=(12, 20))


def test_sequence_with_a_gap_writes_every_frame_on_disk_and_reports_the_gap(tmp_path: Path):
    sequence(tmp_path / "plates", [1001, 1002, 1003, 1006, 1007])
    out = tmp_path / "out"
    res = run_oxi("cdl", str(tmp_path / "plates" / "plate.####.exr"), "-o", str(out / "graded.%05d.exr"),
                  "--slope", "1.2", "--json")
    assert res.returncode == 0, res.stderr  # a gap found on disk is reported, not a failure
    assert listing(out) == [f"graded.{f:05d}.exr" for f in (1001, 1002, 1003, 1006, 1007)]
    assert "missing frames 1004-1005" in res.stderr
    recs = records(res.stdout)
    assert sorted(r["frame"] for r in recs) == [1001, 1002, 1003, 1004, 1005, 1006, 1007]
    assert {r["frame"]: r["status"] for r in recs if r["status"] != "ok"} == {1004: "missing", 1005: "missing"}


def test_frames_range_with_step_picks_frames_and_fails_on_the_absent_one(tmp_path: Path):
    sequence(tmp_path, [1, 3, 5, 9], "shot_v2.{}.exr")
    out = tmp_path / "out"
    res = run_oxi("blur", str(tmp_path / "shot_v2.%d.exr"), "-o", str(out), "--frames", "1-7x2", "--sigma", "1",
                  "--name", "{base}_soft.{frame:04d}{ext}", "--json")
    assert res.returncode == 1  # frame 7 was asked for and is not there
    assert listing(out) == ["shot_v2_soft.0001.exr", "shot_v2_soft.0003.exr", "shot_v2_soft.0005.exr"]
    recs = by_input(res.stdout)
    assert recs["shot_v2.7.exr"]["status"] == "missing"
    assert "missing frames: 7" in res.stderr


def test_in_out_form_takes_a_sequence_and_an_output_pattern(tmp_path: Path):
    sequence(tmp_path, [10, 11])
    res = run_oxi("resize", str(tmp_path / "plate.#.exr"), str(tmp_path / "half" / "plate.#.exr"), "--scale", "0.5")
    assert res.returncode == 0, res.stderr
    assert listing(tmp_path / "half") == ["plate.0010.exr", "plate.0011.exr"]
