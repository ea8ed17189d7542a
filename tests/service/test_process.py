"""A served call behaves as a process of its own: real signals to a real client mid-batch (SIGTERM, SIGHUP, SIGINT,
SIGTSTP/SIGSTOP and SIGCONT), standard streams closed by the caller, and the caller's process tree (completion)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from oxi_cli.service import caller
from tests.service.conftest import OXI_CMD, oxi, status, wait_for

BOTH = ("off", "on")  # a process of its own, then the service
FILES = 40


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FILES frames (links to one 1024x540 plate of noise): a batch that runs for seconds on two cores, most of
    it writing (each output's hidden temporary)."""
    folder = tmp_path_factory.mktemp("shots")
    rng = np.random.default_rng(7)
    channels = {c: rng.uniform(0, 2, (540, 1024)).astype(np.float16) for c in "RGBA"}
    plate = folder.parent / "noise.exr"
    OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}, channels).write(str(plate))
    for i in range(FILES):
        (folder / f"shot.{1001 + i}.exr").symlink_to(plate)
    return folder



def written(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if not p.name.startswith("."))


def temporaries(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if ".oxi-tmp-" in p.name)


def start_batch(env: dict, shots: Path, out: Path, mode: str) -> subprocess.Popen:
    """A batch grading FILES frames one at a time, in its own process group (as a shell's job would be), once
    it is writing a file (its temporary exists)."""
    out.mkdir()
    proc = subprocess.Popen([*OXI_CMD, "cdl", str(shots), "-o", str(out), "--slope", "1.1", "--jobs", "1"],
                            env={**env, "OXI_SERVER": mode}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            process_group=0)
    wait_for(lambda: temporaries(out) or proc.poll() is not None, "a file being written")
    assert proc.poll() is None, proc.stderr.read()
    return proc


@pytest.mark.parametrize("mode", BOTH)
@pytest.mark.parametrize(("sig", "status_"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGHUP, -signal.SIGHUP),
                                              (signal.SIGINT, 130)], ids=["TERM", "HUP", "INT"])
def test_a_signal_ends_a_batch_as_it_ends_its_own_process_and_leaves_no_temporary(env, shots, tmp_path, mode, sig,
                                                                                   status_):
    out = tmp_path / "out"
    proc = start_batch(env, shots, out, mode)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == status_, err  # a shell says 143, 129, 130
    assert temporaries(out) == [] and len(written(out)) < FILES
    if mode == "on":
        wait_for(lambda: not status(env)["jobs_running"], "the worker to be free")
        assert oxi(env, "info", str(shots / "shot.1001.exr")).returncode == 0  # the service serves on


def _stopped_pids(env: dict, proc: subprocess.Popen, mode: str) -> list[int]:
    """The processes running the job: the client's own, or the service's worker for it."""
    return [proc.pid] if mode == "off" else status(env)["busy_worker_pids"]


@pytest.mark.parametrize("mode", BOTH)
@pytest.mark.parametrize("sig", [signal.SIGTSTP, signal.SIGSTOP], ids=["TSTP", "STOP"])
def test_a_stopped_call_pauses_its_job_until_it_is_continued(env, shots, tmp_path, mode, sig):
    out = tmp_path / "out"
    proc = start_batch(env, shots, out, mode)
    try:
        proc.send_signal(sig)
        wait_for(lambda: caller.stopped(proc.pid), "the client to stop")
        job = _stopped_pids(env, proc, mode)
        wait_for(lambda: all(caller.stopped(pid) for pid in job), "the job to stop")
        before = written(out)
        time.sleep(1.0)  # a running batch writes a file every few tenths of a second
        assert written(out) == before and len(before) < FILES
    finally:
        proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert len(written(out)) == FILES and temporaries(out) == []


@pytest.mark.parametrize("closed", [1, 0], ids=["stdout", "stdin"])
def test_a_closed_standard_stream_gives_one_line_as_in_a_process_of_its_own(env, shots, closed):
    results = []
    for mode in BOTH:
        done = subprocess.run([*OXI_CMD, "info", str(shots / "shot.1001.exr")], env={**env, "OXI_SERVER": mode},
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL if closed else None,
                              preexec_fn=lambda: os.close(closed), timeout=300)
        results.append((done.returncode, done.stderr))
    assert results[0] == results[1]
    if closed == 1:
        assert results[0] == (2, b"oxi: error: standard output is closed (>&-); give it a file or /dev/null\n")
    else:
        assert results[0][0] == 0  # info reads no input


@pytest.mark.skipif(not shutil.which("bash"), reason="completion is installed for the shell the call came from")
@pytest.mark.parametrize("mode", BOTH)
def test_completion_is_installed_for_the_callers_shell(env, tmp_path, mode):
    home = tmp_path / "home"
    home.mkdir()
    # `; true`: bash would otherwise exec oxi in its own place, and oxi's parent would be this test
    done = subprocess.run(["bash", "-c", '"$@"; true', "bash", *OXI_CMD, "--install-completion"],
                          env={**env, "OXI_SERVER": mode, "HOME": str(home)}, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert b"bash completion installed in" in done.stdout
    assert "_OXI_COMPLETE" in (home / ".bashrc").read_text() + "".join(
        p.read_text() for p in home.rglob("*") if p.is_file())


def test_a_client_killed_while_stopped_has_its_job_cancelled(env, shots, tmp_path):
    out = tmp_path / "out"
    proc = start_batch(env, shots, out, "on")
    proc.send_signal(signal.SIGSTOP)
    job = wait_for(lambda: status(env)["busy_worker_pids"], "the job's worker")
    wait_for(lambda: all(caller.stopped(pid) for pid in job), "the job to stop")
    proc.kill()
    proc.wait()
    wait_for(lambda: not status(env)["jobs_running"], "the job to end")  # not a worker stopped for ever
    assert temporaries(out) == [] and len(written(out)) < FILES


@pytest.mark.parametrize("mode", BOTH)
def test_a_batch_whose_terminal_hangs_up_ends_by_sighup_and_leaves_no_temporary(env, shots, tmp_path, mode):
    import pty
    import select

    out = tmp_path / "out"
    out.mkdir()
    pid, terminal = pty.fork()  # the call in a session of its own on a terminal, as from a login
    if pid == 0:
        os.execvpe(OXI_CMD[0], [*OXI_CMD, "cdl", str(shots), "-o", str(out), "--slope", "1.1", "--jobs", "1"],
                   {**env, "OXI_SERVER": mode})
    try:
        def writing() -> bool:
            if select.select([terminal], [], [], 0)[0]:
                with contextlib.suppress(OSError):
                    os.read(terminal, 65536)  # the progress bar, read as a terminal would
            return bool(temporaries(out))

        wait_for(writing, "a file being written")
    finally:
        os.close(terminal)  # the terminal goes away: the kernel sends SIGHUP to its session
        _, ended = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(ended) and os.WTERMSIG(ended) == signal.SIGHUP  # a shell says 129
    assert temporaries(out) == [] and len(written(out)) < FILES


def test_a_served_job_clears_a_temporary_a_killed_run_left_since_the_service_started(env, shots, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = out / f".shot.1001.oxi-tmp-{gone.pid}-abcd1234.exr"  # its writer was killed
    stale.write_bytes(b"half-written")
    written_at = time.time() - status(env)["uptime_seconds"] / 2  # after the service started, before this call
    os.utime(stale, (written_at, written_at))
    done = oxi(env, "cdl", str(shots / "shot.1001.exr"), str(out / "shot.1001.exr"), "--slope", "1.1")
    assert done.returncode == 0, done.stderr
    assert not stale.exists()  # as a process of its own, started after it was written, would judge it
