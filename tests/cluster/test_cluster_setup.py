"""Starting workers (`oxi worker`), farm templates (OpenJD), addresses, and what oxi imports without --cluster."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from oxi_cli.batch.cluster import ClusterAddress, parse_address
from oxi_cli.errors import UsageError
from tests.batch.helpers import exr_folder, listing, records
from tests.cluster.helpers import oxi_cmd, run, same_files, sequence

REPO = Path(__file__).resolve().parents[2]


def test_importing_oxi_and_its_help_never_import_dask():
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from oxi_cli.cli.main import app\n"
        "for args in (['--help'], ['run', '--help'], ['cdl', '--help'], ['worker', '--help']):\n"
        "    assert CliRunner().invoke(app, args).exit_code == 0, args\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "assert not loaded, loaded\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize(("text", "jobs", "expected"), [
    ("local", 3, ClusterAddress(None, 3)),
    ("local:2", None, ClusterAddress(None, 2)),
    ("tcp://farm01:8786", 4, ClusterAddress("tcp://farm01:8786")),  # a recipe's jobs = 2 does not get in the way
    ("farm01:8786", None, ClusterAddress("tcp://farm01:8786")),
])
def test_cluster_addresses(text: str, jobs: int | None, expected: ClusterAddress):
    assert parse_address(text, jobs) == expected


@pytest.mark.parametrize("text", ["local:0", "local:x", "farm01", "http//x"])
def test_bad_cluster_addresses_are_usage_errors(text: str):
    with pytest.raises(UsageError):
        parse_address(text)


def test_oxi_worker_advertises_its_budget_and_runs_one_file_at_a_time_when_only_one_fits(tmp_path: Path):
    from distributed import Client, LocalCluster

    exr_folder(tmp_path / "in", [f"f{i}.exr" for i in range(4)], size=(128, 128))
    env = {**os.environ, "OXI_BACKEND": "cpu"}
    # A scheduler alone; its only worker is `oxi worker` with 3 threads and room for one file at a time
    # (each: 128*128 px * 7 half channels * (2 + 8) bytes = 1.09 MiB estimated).
    with LocalCluster(n_workers=0, dashboard_address=":0", processes=False, protocol="tcp") as scheduler, \
            Client(scheduler, set_as_default=False) as client:
        proc = subprocess.Popen(oxi_cmd("worker", scheduler.scheduler_address, "--nthreads", "3",
                                        "--memory-budget", "1.5M", "--name", "oxi-test-worker"),
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            client.wait_for_workers(1, timeout=60)
            (worker,) = client.scheduler_info(n_workers=-1)["workers"].values()
            assert worker["nthreads"] == 3 and worker["resources"] == {"MEMORY": 1.5 * 2**20}
            res = run("blur", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--sigma", "1.5", "--json",
                      "--cluster", scheduler.scheduler_address)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    assert res.returncode == 0, res.stderr
    recs = sorted(records(res.stdout), key=lambda r: r["started"])
    assert len(recs) == 4 and {r["status"] for r in recs} == {"ok"}
    for before, after in zip(recs, recs[1:], strict=False):
        assert after["started"] >= before["finished"], (before, after)


@pytest.mark.skipif(shutil.which("openjd") is None, reason="openjd-cli is not installed")
def test_openjd_template_runs_oxi_per_chunk_and_writes_every_frame(tmp_path: Path):
    pattern = sequence(tmp_path / "in", [1001, 1002, 1003, 1004, 1005])
    template = REPO / "examples" / "openjd" / "oxi_frames.yaml"
    oxi = " ".join(oxi_cmd())
    env = {**os.environ, "OXI_BACKEND": "cpu", "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    res = subprocess.run(
        ["openjd", "run", str(template), "-p", f"Input={pattern}", "-p", f"Output={tmp_path / 'ojd/p.####.exr'}",
         "-p", "Frames=1001-1005", "-p", "ChunkSize=2", "-p", "OxiArgs=--cdl slope=1.1 --resize 50%",
         "-p", f"Oxi={oxi}"],
        capture_output=True, text=True, env=env, timeout=180)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "Chunks run: 3" in res.stdout
    local = run("run", pattern, "-o", str(tmp_path / "local/p.####.exr"), "--cdl", "slope=1.1", "--resize", "50%")
    assert local.returncode == 0, local.stderr
    assert listing(tmp_path / "ojd") == [f"p.{f}.exr" for f in range(1001, 1006)]
    same_files(tmp_path / "local", tmp_path / "ojd")
