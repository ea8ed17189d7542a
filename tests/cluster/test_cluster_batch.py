"""A batch on a real Dask cluster writes what the local batch writes, with the same records and exit codes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.batch.helpers import by_input, exr_folder, listing, records
from tests.cluster.helpers import run, same_files, sequence

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def both(tmp_path: Path, cluster: str, *args: str) -> tuple:
    """Run `oxi args` locally (-o tmp/local...) and on the cluster (-o tmp/cluster...); args use {out}."""
    local = run(*(a.format(out=tmp_path / "local") for a in args), "--json")
    remote = run(*(a.format(out=tmp_path / "cluster") for a in args), "--json", "--cluster", cluster)
    return local, remote


def statuses(stdout: str) -> dict[str, str]:
    return {name: r["status"] for name, r in by_input(stdout).items()}


def test_sequence_with_gaps_on_a_local_cluster_equals_the_local_batch(tmp_path: Path):
    pattern = sequence(tmp_path / "in", [1001, 1002, 1003, 1005, 1006])
    local, remote = both(tmp_path, "local:2", "run", pattern, "-o", "{out}/p.####.exr", "--frames", "1001-1006",
                         "--cdl", "slope=1.1,1,0.9 sat=0.8")
    assert local.returncode == remote.returncode == 1, remote.stderr  # frame 1004 was asked for and is missing
    assert statuses(remote.stdout) == statuses(local.stdout)
    assert statuses(remote.stdout)["plate.1004.exr"] == "missing"
    assert "missing frames: 1004" in remote.stderr
    same_files(tmp_path / "local", tmp_path / "cluster")


def test_recipe_chain_on_a_scheduler_equals_the_local_batch(tmp_path: Path, cluster: str):
    pattern = sequence(tmp_path / "in", [1, 2, 3, 4])
    recipe = EXAMPLES / "dailies.toml"  # cdl, lut3d, resize 50%, half DWAA, and [run] jobs = 2
    local, remote = both(tmp_path, cluster, "run", "--recipe", str(recipe), pattern, "-o", "{out}/d.####.exr")
    assert local.returncode == remote.returncode == 0, remote.stderr
    recs = records(remote.stdout)
    assert [r["out_width"] for r in recs] == [32] * 4 and {r["status"] for r in recs} == {"ok"}
    assert all("@ tcp://" in r["device"] for r in recs)  # the worker that did it
    same_files(tmp_path / "local", tmp_path / "cluster")


def test_folder_with_a_bad_file_fails_that_file_and_finishes_the_rest(tmp_path: Path, cluster: str):
    exr_folder(tmp_path / "in", ["a.exr", "b.exr", "c.exr"], size=(48, 64))
    (tmp_path / "in" / "bad.exr").write_bytes(b"not an exr at all")
    local, remote = both(tmp_path, cluster, "blur", str(tmp_path / "in"), "-o", "{out}", "--sigma", "1.5",
                         "--continue-on-error")
    assert local.returncode == remote.returncode == 1
    assert statuses(remote.stdout) == statuses(local.stdout) == {"a.exr": "ok", "b.exr": "ok", "c.exr": "ok",
                                                                 "bad.exr": "failed"}
    assert "failed: " in remote.stderr and "bad.exr" in remote.stderr
    same_files(tmp_path / "local", tmp_path / "cluster")


def test_skip_existing_resumes_where_a_batch_stopped(tmp_path: Path, cluster: str):
    pattern = sequence(tmp_path / "in", [1, 2, 3, 4, 5])
    first = run("cdl", pattern, "-o", str(tmp_path / "out/p.####.exr"), "--sat", "0.5", "--frames", "1-2",
                "--cluster", cluster)
    assert first.returncode == 0, first.stderr
    resumed = run("cdl", pattern, "-o", str(tmp_path / "out/p.####.exr"), "--sat", "0.5", "--skip-existing",
                  "--json", "--cluster", cluster)
    assert resumed.returncode == 0, resumed.stderr
    assert statuses(resumed.stdout) == {"plate.0001.exr": "skipped", "plate.0002.exr": "skipped",
                                        "plate.0003.exr": "ok", "plate.0004.exr": "ok", "plate.0005.exr": "ok"}
    assert listing(tmp_path / "out") == [f"p.{i:04d}.exr" for i in range(1, 6)]


def test_a_dead_workers_temporary_is_removed_when_its_frame_is_redone(tmp_path: Path, cluster: str):
    pattern = sequence(tmp_path / "in", [1, 2])
    out = tmp_path / "out"
    out.mkdir()
    stale = out / ".p.0001.oxi-tmp-k1ll3d.exr"  # what a worker SIGKILLed while writing p.0001.exr leaves
    stale.write_bytes(b"half an exr")
    os.utime(stale, (time.time() - 60, time.time() - 60))
    res = run("cdl", pattern, "-o", str(out / "p.####.exr"), "--sat", "0.5", "--cluster", cluster)
    assert res.returncode == 0, res.stderr
    assert listing(out) == ["p.0001.exr", "p.0002.exr"]


def test_the_first_failure_stops_the_batch_without_continue_on_error(tmp_path: Path, cluster: str):
    exr_folder(tmp_path / "in", [f"f{i}.exr" for i in range(1, 4)])
    (tmp_path / "in" / "f0.exr").write_bytes(b"broken")
    res = run("cdl", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--sat", "0.5", "--json",
              "--cluster", cluster)
    assert res.returncode == 1
    assert statuses(res.stdout)["f0.exr"] == "failed"
    assert "stopped at the first failure" in res.stderr
    # Files that were not started left nothing; the ones that ran are whole.
    done = {name for name, status in statuses(res.stdout).items() if status == "ok"}
    assert set(listing(tmp_path / "out")) == done


def test_an_unreachable_scheduler_is_one_line_and_exit_2(tmp_path: Path):
    pattern = sequence(tmp_path / "in", [1])
    t0 = time.monotonic()
    res = run("cdl", pattern, "-o", str(tmp_path / "out/p.####.exr"), "--sat", "0.5",
              env={"OXI_CLUSTER": "tcp://127.0.0.1:9"})  # the env variable, as a farm's wrapper would set it
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "no Dask scheduler answers at tcp://127.0.0.1:9" in res.stderr
    assert time.monotonic() - t0 < 15
    assert not (tmp_path / "out").exists() or listing(tmp_path / "out") == []


def test_a_cluster_address_that_is_not_one_is_a_usage_error(tmp_path: Path):
    res = run("cdl", str(tmp_path / "x.exr"), str(tmp_path / "y.exr"), "--sat", "0.5", "--cluster", "nowhere")
    assert res.returncode == 2 and "give a scheduler address" in res.stderr
