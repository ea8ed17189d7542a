"""The warm service through the real `oxi` command: same bytes as a run of its own, concurrent clients, Ctrl-C,
clients and workers that die, stale sockets, idle expiry, and refusing what is not this user's oxi command line."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from oxi_cli.service import control, paths, protocol
from tests.service.conftest import OXI_CMD, oxi, status

CASES = [
    ["cdl", "{in}", "{out}", "--slope", "1.1,1,0.9", "--json"],
    ["resize", "{in}", "{out}", "--scale", "50%"],
    ["cdl", "{in}", "{out}", "--slope", "abc"],
    ["cdl", "{missing}", "{out}", "--slope", "1.1"],
    ["info", "{in}", "--json"],
    ["cdl", "--help"],
    ["run", "{in}", "{out}", "--cdl", "slope=1.2", "--plan"],
]


# --json fields that measure the run rather than describe it.
TIMINGS = {"started", "finished", "seconds", "stages", "peak_memory_bytes"}


def _timeless(stdout: bytes) -> bytes:
    """--json records without their timings, --plan's budgets (half the memory free at the time) and the
    process's own memory (a warm worker has more loaded than a fresh process) masked; any other output as it is."""
    if not stdout.startswith(b"{"):
        stdout = re.sub(rb"\(\+[0-9.]+ [KMG]iB runtime\)", b"(+N runtime)", stdout)
        return re.sub(rb"[0-9.]+ GiB", b"N GiB", stdout)
    records = [json.loads(line) for line in stdout.splitlines()]
    return json.dumps([{k: v for k, v in r.items() if k not in TIMINGS} for r in records]).encode()


@pytest.mark.parametrize("case", CASES, ids=lambda c: " ".join(c[:1] + c[3:]))
def test_a_command_through_the_service_prints_exits_and_writes_as_its_own_process(env, plate, tmp_path, case):
    results = []
    out = tmp_path / "out.exr"
    for mode in ("off", "on"):
        args = [a.format(**{"in": plate, "out": out, "missing": tmp_path / "nope.exr"}) for a in case]
        run = oxi({**env, "OXI_SERVER": mode}, *args)
        written = out.read_bytes() if out.exists() else None
        out.unlink(missing_ok=True)
        results.append((run.returncode, _timeless(run.stdout), run.stderr, written))
    assert results[0] == results[1]
    assert status(env)["jobs_served"] >= 1


def test_several_clients_run_at_once_in_their_own_workers(env, big, tmp_path):
    before = status(env)["jobs_served"]
    procs = [subprocess.Popen([*OXI_CMD, "blur", str(big), str(tmp_path / f"o{i}.exr"), "--sigma", "3"], env=env,
                              stderr=subprocess.PIPE) for i in range(3)]
    seen = 0
    while any(p.poll() is None for p in procs):
        seen = max(seen, status(env)["jobs_running"])
        time.sleep(0.05)
    assert [p.returncode for p in procs] == [0, 0, 0], [p.stderr.read() for p in procs]
    assert seen >= 2  # they ran side by side, not one behind another
    assert status(env)["jobs_served"] == before + 3
    first = (tmp_path / "o0.exr").read_bytes()
    assert all((tmp_path / f"o{i}.exr").read_bytes() == first for i in (1, 2))


def test_status_gives_each_process_its_own_memory(env, plate, tmp_path):
    """A worker forked while another finishes adds its size to the total: growth is read process by process."""
    assert oxi(env, "cdl", str(plate), str(tmp_path / "o.exr"), "--slope", "1.1").returncode == 0
    found = status(env)
    workers = found["worker_memory_bytes"]
    assert len(workers) == found["workers"] and all(v > 0 for v in workers.values())
    assert found["dispatcher_memory_bytes"] > 0
    assert found["dispatcher_memory_bytes"] + sum(workers.values()) == pytest.approx(found["memory_bytes"], rel=0.05)


def test_a_call_under_a_memory_limit_runs_its_own_job_under_that_limit(env, plate, tmp_path):
    import resource

    def six_gib_of_data() -> None:  # ulimit -d, as a farm's task sets it
        resource.setrlimit(resource.RLIMIT_DATA, (6 << 30, resource.getrlimit(resource.RLIMIT_DATA)[1]))

    oxi(env, "server", "start")
    before = status(env)["jobs_served"]
    done = subprocess.run([*OXI_CMD, "cdl", str(plate), str(tmp_path / "o.exr"), "--slope", "2"], env=env,
                          capture_output=True, timeout=300, preexec_fn=six_gib_of_data)
    assert done.returncode == 0, done.stderr
    assert status(env)["jobs_served"] == before  # a worker would not have been under the caller's limit
    assert oxi(env, "cdl", str(plate), str(tmp_path / "p.exr"), "--slope", "2").returncode == 0
    assert status(env)["jobs_served"] == before + 1


def _holders_of_pipe(inode: int) -> list[int]:
    """The processes (of any of this user's) with a descriptor on pipe `inode` open."""
    def link(path: str) -> str:
        try:
            return os.readlink(path)
        except OSError:  # a descriptor closed since the listing
            return ""

    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        if any(link(f"/proc/{pid}/fd/{fd}") == f"pipe:[{inode}]" for fd in fds):
            found.append(int(pid))
    return found


def test_a_clients_output_pipe_is_closed_by_the_service_once_its_job_ends(tmp_path, plate):
    run = tmp_path / "runtime"
    run.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "OXI_BACKEND": "cpu"}
    try:
        assert oxi(env, "server", "start").returncode == 0  # one idle worker: the clients below make it fork more
        read_end, write_end = os.pipe()
        procs = [subprocess.Popen([*OXI_CMD, "cdl", str(plate), str(tmp_path / f"o{i}.exr"), "--slope", "2"],
                                  env=env, stdout=write_end, stderr=write_end) for i in range(6)]
        os.close(write_end)
        assert [p.wait(timeout=300) for p in procs] == [0] * 6
        assert status(env)["workers"] >= 2  # workers were forked while other clients' jobs waited
        # `$(oxi ...)` and subprocess.run read the pipe to its end: nobody else may still hold it
        assert _holders_of_pipe(os.fstat(read_end).st_ino) == [os.getpid()]
        os.close(read_end)
    finally:
        oxi(env, "server", "stop")


def _start_and_wait_running(env: dict, args: list[str]) -> subprocess.Popen:
    before = status(env)["jobs_served"]
    proc = subprocess.Popen([*OXI_CMD, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while status(env)["jobs_served"] == before and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # into the job, past its start
    return proc


def test_ctrl_c_in_the_client_cancels_its_job_and_leaves_no_output(env, big, tmp_path):
    out = tmp_path / "blurred.exr"
    proc = _start_and_wait_running(env, ["blur", str(big), str(out), "--sigma", "40"])
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.decode().strip().splitlines() == ["oxi: error: interrupted; no partial output was left behind"]
    assert list(tmp_path.glob("*blurred*")) == []
    assert oxi(env, "cdl", str(big), str(tmp_path / "after.exr"), "--slope", "2").returncode == 0  # still serving


def test_a_client_that_is_killed_has_its_job_cancelled(env, big, tmp_path):
    out = tmp_path / "blurred.exr"
    proc = _start_and_wait_running(env, ["blur", str(big), str(out), "--sigma", "40"])
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 30
    while status(env)["jobs_running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert status(env)["jobs_running"] == 0
    assert list(tmp_path.glob("*blurred*")) == []


def test_a_job_a_worker_started_is_never_run_again_when_the_worker_dies(env, big, tmp_path):
    """The worker is killed after the first of three files: the client says so in one line (the files written,
    the log) and exits 1; it does not run the batch again (which met the first output: "exists already")."""
    inputs = [shutil.copy(big, tmp_path / f"p{i}.exr") for i in range(3)]
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([*OXI_CMD, "blur", *map(str, inputs), "-o", str(out), "--sigma", "6", "--json"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = json.loads(proc.stdout.readline())  # the first file's record: it is written
    for pid in status(env)["busy_worker_pids"]:
        os.kill(pid, signal.SIGKILL)
    rest, err = proc.communicate(timeout=300)
    written = sorted(p.name for p in out.iterdir())
    lines = [line for line in err.decode().splitlines() if line.startswith("oxi:")]  # not the progress lines
    assert proc.returncode == 1 and first["output"].endswith("p0.exr") and len(written) < 3, (written, lines)
    count = f"{len(written)} file{'' if len(written) == 1 else 's'}"
    assert lines == [f"oxi: error: the oxi service's worker ended during the job, after writing {count}; it was not "
                     f"run again (see {paths.log_path(env)})"]
    assert 1 + len(rest.splitlines()) == len(written)  # a --json record per file written, none twice
    assert status(env)["running"]  # the dispatcher lives on


def test_a_request_that_is_not_an_oxi_command_line_is_refused(env):
    folder = paths.runtime_dir(env)
    key = status(env)["key"]
    for bad in ({"op": "run", "argv": "rm -rf /"}, {"op": "exec", "code": "print(1)"}, {"op": "run"}):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(paths.socket_path(folder, key))
        protocol.send(sock, bad, fds=[0, 1, 2])
        reply = protocol.recv(sock)
        sock.close()
        assert "refused" in reply
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(paths.socket_path(folder, key))
    sock.sendall(b"\xff\xff\xff\xffnot a frame")  # a length over the limit
    reply = protocol.recv(sock)
    sock.close()
    assert reply is not None and "refused" in reply
    assert status(env)["running"]


@pytest.mark.skipif(os.geteuid() != 0, reason="a second uid needs root to switch to (CI and the dev box run as root)")
def test_a_connection_from_another_user_is_refused(plate):
    # A runtime folder nobody could reach is the first wall; this opens it up (as a wrong mode would) to show
    # the second: the service checks every connection's uid with the kernel.
    run = Path(tempfile.mkdtemp(prefix="oxi-uid-test-", dir="/tmp"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "OXI_BACKEND": "cpu"}
    try:
        assert oxi(env, "cdl", str(plate), str(run / "a.exr"), "--slope", "2").returncode == 0
        sock_path = status(env)["socket"]
        for folder in (run, run / "oxi"):
            folder.chmod(0o711)
        os.chmod(sock_path, 0o777)
        code = textwrap.dedent(f"""
            import os, socket, sys
            os.setgid(65534)
            os.setuid(65534)
            s = socket.socket(socket.AF_UNIX)
            s.connect({sock_path!r})
            try:
                s.sendall(b"x" * 4)
                answer = s.recv(10)
            except (BrokenPipeError, ConnectionResetError):  # closed before or with our bytes unread
                answer = b""
            sys.exit(0 if answer == b"" else 1)
        """)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "refused a connection from uid 65534" in Path(paths.log_path(env)).read_text()
    finally:
        (run / "oxi").chmod(0o700)
        oxi(env, "server", "stop")
        shutil.rmtree(run, ignore_errors=True)


def test_a_stale_socket_left_by_a_crash_is_cleaned_up_by_the_next_call(tmp_path, plate):
    run = tmp_path / "runtime"
    run.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "OXI_BACKEND": "cpu"}
    assert oxi(env, "cdl", str(plate), str(tmp_path / "a.exr"), "--slope", "2").returncode == 0
    first = status(env)
    os.killpg(os.getpgid(first["pid"]), signal.SIGKILL)  # the dispatcher and its workers, as a crash would
    time.sleep(0.5)
    assert Path(first["socket"]).exists()
    done = oxi(env, "cdl", str(plate), str(tmp_path / "b.exr"), "--slope", "2")
    assert done.returncode == 0 and done.stderr == b""
    second = status(env)
    assert second["running"] and second["pid"] != first["pid"]
    oxi(env, "server", "stop")


def test_an_idle_service_exits_and_removes_its_socket(tmp_path, plate):
    run = tmp_path / "runtime"
    run.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "OXI_BACKEND": "cpu", "OXI_SERVER_IDLE": "2"}
    assert oxi(env, "cdl", str(plate), str(tmp_path / "a.exr"), "--slope", "2").returncode == 0
    sock = Path(status(env)["socket"])
    deadline = time.monotonic() + 30
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not sock.exists() and not control.status(env)["running"]


def test_a_service_of_another_build_is_never_used(env, plate, tmp_path):
    other = {**env, "NUMBA_OPT": "2"}  # a setting bound when a process starts: another build's service
    assert paths.build_key(other) != paths.build_key(env)
    assert oxi(other, "cdl", str(plate), str(tmp_path / "a.exr"), "--slope", "2").returncode == 0
    mine, theirs = status(env), status(other)
    assert mine["pid"] != theirs["pid"] and theirs["other_builds"] >= 1


def _on_a_terminal(env: dict, args: list[str]) -> bytes:
    """What `oxi ARGS` writes to a terminal (a pseudo-terminal here), until it exits."""
    master, slave = os.openpty()
    proc = subprocess.Popen([*OXI_CMD, *args], env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=300) == 0, b"".join(chunks)[-2000:]
    return b"".join(chunks)


def test_a_progress_bar_shows_on_a_terminal_through_the_service_as_in_a_process_of_its_own(env, big, tmp_path):
    shown = {}
    for mode in ("off", "on"):
        shown[mode] = _on_a_terminal({**env, "OXI_SERVER": mode, "TERM": "xterm-256color"},
                                     ["blur", str(big), str(tmp_path / f"{mode}.exr"), "--sigma", "4"])
    first_frame = b"\x1b[?25l\x1b[1m0/1 files"  # rich hides the cursor and draws the bar's first state
    assert shown["off"].startswith(first_frame) and shown["on"].startswith(first_frame)
    assert b"1/1 files" in shown["off"] and b"1/1 files" in shown["on"]


def test_files_of_concurrent_clients_are_admitted_against_one_memory_budget(tmp_path):
    rng = np.random.default_rng(4)
    plate = tmp_path / "hd.exr"
    channels = {c: rng.uniform(0, 2, (1080, 1920)).astype(np.float16) for c in "RGBA"}
    OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}, channels).write(str(plate))
    run = tmp_path / "runtime"
    run.mkdir(mode=0o700)
    # A budget smaller than any one file: each runs alone (as --jobs admits them), the others wait their turn.
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "OXI_BACKEND": "cpu",
           "OXI_SERVER_BUDGET": "1M"}
    try:
        procs = [subprocess.Popen([*OXI_CMD, "blur", str(plate), str(tmp_path / f"o{i}.exr"), "--sigma", "2"],
                                  env=env, stderr=subprocess.PIPE) for i in range(4)]
        waited = in_use = 0
        while any(p.poll() is None for p in procs):
            found = control.status(env)  # the clients start the service: it may not answer yet
            if found["running"]:
                waited = max(waited, found["files_waiting"])
                in_use = max(in_use, found["budget_in_use_bytes"])
            time.sleep(0.02)
        assert [p.returncode for p in procs] == [0] * 4, [p.stderr.read() for p in procs]
        assert waited >= 1  # a file waited for another's memory rather than running beside it
        assert status(env)["budget_bytes"] == 1 << 20
    finally:
        oxi(env, "server", "stop")


def test_a_client_whose_working_folder_is_gone_runs_its_job_itself(env, plate, tmp_path):
    found = []
    for mode in ("off", "on"):
        gone = tmp_path / f"gone-{mode}"
        gone.mkdir()
        out = tmp_path / f"o-{mode}.exr"
        script = f"cd {gone} && rmdir {gone} && exec {' '.join(OXI_CMD)} cdl {plate} {out} --slope 2"
        done = subprocess.run(["bash", "-c", script], env={**env, "OXI_SERVER": mode}, capture_output=True,
                              timeout=300)
        found.append((done.returncode, done.stderr, out.read_bytes() if out.exists() else None))
    assert found[0] == found[1] and found[0][0] == 0


def test_each_job_sees_its_own_ocio_config_as_a_process_of_its_own_would(env):
    # One warm worker, two clients with other $OCIO: the second must not get the first's config from a cache.
    for config in ("ocio://studio-config-latest", "ocio://cg-config-latest", "ocio://studio-config-latest"):
        served = oxi({**env, "OCIO": config}, "colorspace", "--list")
        own = oxi({**env, "OCIO": config, "OXI_SERVER": "off"}, "colorspace", "--list")
        assert served.returncode == own.returncode == 0
        assert served.stdout == own.stdout and config.split("//")[1].split("-")[0].encode() in served.stdout


def test_kernels_each_served_job_finds_cold_compile_in_the_background_and_outlive_the_service(tmp_path, plate):
    """One warm worker, two jobs with other cold kernels: each job runs at once on stand-ins and has started its
    background compile by the time its client is answered (as a process of its own has when it exits: a waiter
    never misses it; a worker's second gathering was left pending, as a worker never exits normally), and the
    compiles live on when the service is killed."""
    run = tmp_path / "runtime"
    run.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "OXI_BACKEND": "cpu",
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "OXI_WAIT_FOR_KERNELS": "0"}
    env.pop("OXI_KERNEL_CACHE", None)
    wait = [sys.executable, "-c", "from oxi_cli import kernel_cache as k; assert k.wait_for_compiles(600); "
            "print(' '.join(sorted(k.compiled())))"]
    first = oxi(env, "cdl", str(plate), str(tmp_path / "a.exr"), "--slope", "1.2")
    assert first.returncode == 0 and first.stderr == b"", first.stderr
    assert "cdl" in subprocess.run(wait, env=env, capture_output=True, text=True, timeout=900).stdout.split()
    second = oxi(env, "matrix", str(plate), str(tmp_path / "b.exr"), "--matrix", "1.1,0,0,0,0.9,0,0,0,1")
    assert second.returncode == 0 and second.stderr == b"", second.stderr
    assert status(env)["jobs_served"] == 2 and status(env)["workers"] == 1
    os.killpg(os.getpgid(status(env)["pid"]), signal.SIGKILL)  # the dispatcher and its worker, as a crash would
    assert "matrix" in subprocess.run(wait, env=env, capture_output=True, text=True, timeout=900).stdout.split()
