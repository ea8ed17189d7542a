"""Batches over folders: names, --json records, --skip-existing, --continue-on-error, --recursive."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from tests.batch.helpers import by_input, exr_folder, listing, records, rgba
from tests.cli.conftest import run_oxi

RECORD_KEYS = {"input", "output", "status", "ops", "backend", "device", "strategy", "seconds", "peak_memory_bytes",
               "error", "started", "finished", "estimate_bytes", "width", "height", "out_width", "out_height"}


def test_folder_batch_names_outputs_and_matches_the_single_file_command(tmp_path: Path):
    shots = exr_folder(tmp_path / "shots", ["sh010.exr", "sh020.exr", "sh030.exr"])
    (tmp_path / "shots" / "notes.txt").write_text("not an image")
    res = run_oxi("cdl", str(tmp_path / "shots"), "-o", str(tmp_path / "graded"), "--name", "{stem}_graded{ext}",
                  "--sat", "0.7", "--power", "1.3", "--json")
    assert res.returncode == 0, res.stderr
    assert listing(tmp_path / "graded") == ["sh010_graded.exr", "sh020_graded.exr", "sh030_graded.exr"]
    recs = records(res.stdout)
    assert [Path(r["input"]).name for r in recs] == ["sh010.exr", "sh020.exr", "sh030.exr"]
    for r in recs:
        assert set(r) >= RECORD_KEYS
        assert r["status"] == "ok" and r["error"] is None and r["backend"] == "cpu"
        assert r["ops"] == [{"op": "cdl", "slope": [1.0] * 3, "offset": [0.0] * 3, "power": [1.3] * 3, "sat": 0.7,
                             "style": "noclamp"}]
        assert (r["width"], r["height"]) == (32, 24) and r["seconds"] > 0 and r["peak_memory_bytes"] > 0
    single = tmp_path / "single.exr"
    assert run_oxi("cdl", str(shots[1]), str(single), "--sat", "0.7", "--power", "1.3").returncode == 0
    np.testing.assert_array_equal(rgba(tmp_path / "graded" / "sh020_graded.exr"), rgba(single))


def test_skip_existing_skips_exactly_the_finished_files(tmp_path: Path):
    exr_folder(tmp_path / "in", [f"f{i}.exr" for i in range(5)])
    out = tmp_path / "out"
    assert run_oxi("blur", str(tmp_path / "in"), "-o", str(out), "--sigma", "1", "-q").returncode == 0
    for name in ("f1.exr", "f3.exr"):  # as if the batch had been interrupted before these
        (out / name).unlink()
    finished = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    res = run_oxi("blur", str(tmp_path / "in"), "-o", str(out), "--sigma", "1", "--skip-existing", "--json")
    assert res.returncode == 0, res.stderr
    status = {name: r["status"] for name, r in by_input(res.stdout).items()}
    assert status == {"f0.exr": "skipped", "f1.exr": "ok", "f2.exr": "skipped", "f3.exr": "ok", "f4.exr": "skipped"}
    assert all((out / n).stat().st_mtime_ns == t for n, t in finished.items())
    assert listing(out) == [f"f{i}.exr" for i in range(5)]


def test_continue_on_error_processes_every_other_file_and_exits_1(tmp_path: Path):
    files = exr_folder(tmp_path / "in", ["a.exr", "b.exr", "c.exr", "d.exr"])
    files[1].write_bytes(files[1].read_bytes()[:300])  # truncated mid-header
    out = tmp_path / "out"
    res = run_oxi("matrix", str(tmp_path / "in"), "-o", str(out), "--matrix", "0,1,0,1,0,0,0,0,1",
                  "--continue-on-error", "--json")
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    recs = by_input(res.stdout)
    assert {n: r["status"] for n, r in recs.items()} == {"a.exr": "ok", "b.exr": "failed", "c.exr": "ok",
                                                         "d.exr": "ok"}
    assert "b.exr" in recs["b.exr"]["error"] and recs["b.exr"]["error_type"] == "InputError"
    assert listing(out) == ["a.exr", "c.exr", "d.exr"]
    assert "3 done, 1 failed" in res.stderr and "failed: " in res.stderr


def test_without_continue_on_error_the_first_failure_stops_the_batch(tmp_path: Path):
    files = exr_folder(tmp_path / "in", ["a.exr", "b.exr", "c.exr"])
    files[1].write_text("not an exr at all")
    out = tmp_path / "out"
    res = run_oxi("blur", str(tmp_path / "in"), "-o", str(out), "--sigma", "1", "--json")
    assert res.returncode == 1
    assert {n: r["status"] for n, r in by_input(res.stdout).items()} == {"a.exr": "ok", "b.exr": "failed",
                                                                         "c.exr": "not_started"}
    assert listing(out) == ["a.exr"]
    assert "--continue-on-error" in res.stderr


def test_recursive_batch_mirrors_sub_folders_and_converts_by_name(tmp_path: Path):
    exr_folder(tmp_path / "renders" / "sh010", ["beauty.exr"])
    exr_folder(tmp_path / "renders" / "sh020" / "v2", ["beauty.exr"])
    out = tmp_path / "png"
    res = run_oxi("run", str(tmp_path / "renders"), "-o", str(out), "--recursive", "--name", "{stem}.png",
                  "--resize", "16x0", "-q")
    assert res.returncode == 0, res.stderr
    # Scene-linear EXRs with AOVs written as PNG with no conversion: one warning of each kind for the batch (the
    # clipping, the layers PNG cannot hold), nothing else.
    assert res.stderr.count("\n") == 2 and "no colour conversion" in res.stderr and "not written" in res.stderr
    assert listing(out) == [os.path.join("sh010", "beauty.png"), os.path.join("sh020", "v2", "beauty.png")]


def test_several_inputs_without_o_is_a_one_line_usage_error(tmp_path: Path):
    a, b, c = exr_folder(tmp_path, ["a.exr", "b.exr", "c.exr"])
    res = run_oxi("cdl", str(a), str(b), str(c), "--sat", "0.5")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "-o" in res.stderr
    assert listing(tmp_path) == ["a.exr", "b.exr", "c.exr"]
