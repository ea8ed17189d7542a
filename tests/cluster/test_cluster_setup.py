"""Starting workers (`oxi worker`), farm templates (OpenJD), addresses, and what oxi imports without --cluster."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oxi_cli.batch.cluster import ClusterAddress, parse_address
from oxi_cli.errors import UsageError
from tests.batch.helpers import listing
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


def test_oxi_worker_joins_a_scheduler_and_advertises_its_memory_budget(cluster: str):
    from distributed import Client

    env = {**os.environ, "OXI_BACKEND": "cpu"}
    proc = subprocess.Popen(oxi_cmd("worker", cluster, "--nthreads", "3", "--memory-budget", "64M", "--name",
                                    "oxi-test-worker"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with Client(cluster, set_as_default=False) as client:
            deadline = time.monotonic() + 60
            mine: list[dict] = []
            while not mine and time.monotonic() < deadline:
                workers = client.scheduler_info(n_workers=-1)["workers"].values()
                mine = [w for w in workers if w.get("name") == "oxi-test-worker"]
                time.sleep(0.2)
            assert mine, "oxi worker never joined"
            assert mine[0]["nthreads"] == 3 and mine[0]["resources"] == {"MEMORY": 64 << 20}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


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
