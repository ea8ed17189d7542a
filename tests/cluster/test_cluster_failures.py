"""A worker SIGKILLed mid-batch costs nothing but time; Ctrl-C on the client stops the cluster's work cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.batch.helpers import exr_folder, listing, output_to_the_end
from tests.cluster.helpers import oxi_cmd, run, same_files

# Frames large enough (768^2 float RGBA + AOVs, ZIP) that a worker is busy with one when a signal lands.
FRAME = (768, 768)


def frames(folder: Path, count: int) -> Path:
    exr_folder(folder, [f"f{i}.exr" for i in range(count)], size=FRAME, half=False)
    return folder


def first_record(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline()  # type: ignore[union-attr]
    assert line, proc.communicate(timeout=60)[1]  # the batch ended before any file: show why
    record = json.loads(line)
    assert record["status"] == "ok", record
    return record


def start(*args: str) -> subprocess.Popen:
    env = {**os.environ, "OXI_BACKEND": "cpu"}
    return subprocess.Popen(oxi_cmd(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def worker_pids(address: str) -> dict[str, int]:
    from distributed import Client

    with Client(address, set_as_default=False) as client:
        return client.run(os.getpid)


def busy_worker(address: str) -> str:
    """A worker that has a file in hand right now (the scheduler's view)."""
    from distributed import Client

    with Client(address, set_as_default=False) as client:
        for _ in range(100):
            busy = [w for w, keys in client.processing().items() if keys]
            if busy:
                return busy[0]
            time.sleep(0.02)
    raise AssertionError("no worker was busy")


def chain_holders(address: str) -> list[str]:
    """The workers holding the batch's chain once it is computed (Dask's memory manager may leave it on one)."""
    from distributed import Client

    with Client(address, set_as_default=False) as client:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            holders = [w for key, ws in client.who_has().items() if str(key).startswith("oxi-chain-") for w in ws]
            if holders:
                return holders
            time.sleep(0.02)
    raise AssertionError("no worker holds the batch's chain")


def blur_batch_losing(cluster: str, src: Path, out: Path, victims: Callable[[str], list[str]]) -> list[dict]:
    """Blur `src` into `out` on the cluster, SIGKILL the workers `victims` names once the first file is out;
    the batch must still exit 0. Returns every --json record."""
    pids = worker_pids(cluster)
    proc = start("blur", str(src), "-o", str(out), "--sigma", "2", "--json", "--cluster", cluster)
    try:
        first = first_record(proc)
        for worker in victims(cluster):
            os.kill(pids[worker], signal.SIGKILL)
        rest, err = output_to_the_end(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    return [first] + [json.loads(line) for line in rest.splitlines()]


def test_losing_every_worker_that_holds_the_chain_costs_only_time(tmp_path: Path, cluster: str):
    src = frames(tmp_path / "in", 6)
    recs = blur_batch_losing(cluster, src, tmp_path / "out", chain_holders)
    assert sorted(Path(r["input"]).name for r in recs) == [f"f{i}.exr" for i in range(6)]
    assert {r["status"] for r in recs} == {"ok"}


def test_a_worker_killed_mid_batch_has_its_frame_redone_once_and_leaves_nothing_partial(tmp_path: Path,
                                                                                          cluster: str):
    src = frames(tmp_path / "in", 6)
    recs = blur_batch_losing(cluster, src, tmp_path / "cluster", lambda c: [busy_worker(c)])
    assert sorted(Path(r["input"]).name for r in recs) == [f"f{i}.exr" for i in range(6)]  # each once
    assert {r["status"] for r in recs} == {"ok"}
    local = run("blur", str(src), "-o", str(tmp_path / "local"), "--sigma", "2")
    assert local.returncode == 0, local.stderr
    same_files(tmp_path / "local", tmp_path / "cluster")  # whole, bit for bit, and no temporaries


def test_sigint_to_the_client_interrupts_the_workers_and_leaves_no_partial_output(tmp_path: Path, cluster: str):
    src = frames(tmp_path / "in", 8)
    out = tmp_path / "out"
    proc = start("blur", str(src), "-o", str(out), "--sigma", "2", "--json", "--cluster", cluster)
    try:
        first = first_record(proc)
        proc.send_signal(signal.SIGINT)
        rest, err = output_to_the_end(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    recs = [first] + [json.loads(line) for line in rest.splitlines()]
    assert sorted(Path(r["input"]).name for r in recs) == [f"f{i}.exr" for i in range(8)]
    done = sorted(Path(r["output"]).name for r in recs if r["status"] == "ok")
    assert {r["status"] for r in recs} <= {"ok", "interrupted", "not_started"}
    assert len(done) < 8
    time.sleep(1.0)  # nothing still running on a worker writes afterwards
    assert listing(out) == done
