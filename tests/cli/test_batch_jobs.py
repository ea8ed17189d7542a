"""--jobs schedules against the memory budget: with room for one file, two never run at once."""

from __future__ import annotations

from pathlib import Path

from tests.batch.helpers import exr_folder, listing, records
from tests.cli.conftest import run_oxi


def test_budget_for_one_file_never_runs_two_at_once(tmp_path: Path):
    exr_folder(tmp_path / "in", [f"f{i}.exr" for i in range(5)], size=(128, 128))
    # Each file: 128*128 px * 7 half channels * (2 + 8) bytes = 1.09 MiB estimated; 1.5 MiB fits one.
    res = run_oxi("blur", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--sigma", "1.5", "--jobs", "4",
                  "--memory-budget", "1.5M", "--json")
    assert res.returncode == 0, res.stderr
    recs = sorted(records(res.stdout), key=lambda r: r["started"])
    assert len(recs) == 5 and all(r["status"] == "ok" for r in recs)
    budget = 1.5 * 2**20
    assert all(r["estimate_bytes"] <= budget < 2 * r["estimate_bytes"] for r in recs)
    for before, after in zip(recs, recs[1:], strict=False):
        assert after["started"] >= before["finished"], (before, after)
    assert len(listing(tmp_path / "out")) == 5


def test_jobs_with_room_for_all_still_writes_every_file_once(tmp_path: Path):
    exr_folder(tmp_path / "in", [f"f{i}.exr" for i in range(6)])
    res = run_oxi("cdl", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--sat", "0.5", "--jobs", "3",
                  "--memory-budget", "1G", "--json")
    assert res.returncode == 0, res.stderr
    assert sorted(r["output"] for r in records(res.stdout)) == sorted(
        str(tmp_path / "out" / f"f{i}.exr") for i in range(6))
    assert listing(tmp_path / "out") == [f"f{i}.exr" for i in range(6)]
