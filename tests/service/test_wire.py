"""No client stops or stalls the service: raw-socket clients speak the protocol directly (frames nested too deep,
descriptors sent with frames that use none, a request trickled a byte at a time, connections that never send),
`oxi server stop` while a job runs, a service that cannot start, and a job handed back to its client."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from oxi_cli.service import paths
from tests.service.conftest import OXI_CMD, oxi, status


def _runtime_env(tmp: Path, **extra: str) -> dict[str, str]:
    run = tmp / "runtime"
    run.mkdir(mode=0o700)
    return {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "OXI_BACKEND": "cpu", **extra}


def _raw(env: dict) -> socket.socket:
    """A connection to the service, made as any process of this user's can."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)  # a listener whose queue is full makes connect wait: that is a failure here, not a hang
    sock.connect(status(env)["socket"])
    return sock


def _frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def _reply(sock: socket.socket) -> dict | None:
    """The service's answer (a length, then JSON), or None when it closed the connection without one."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            break
        data += chunk
        if len(data) >= 4 and len(data) >= 4 + int.from_bytes(data[:4], "big"):
            break
    return json.loads(data[4:4 + int.from_bytes(data[:4], "big")]) if len(data) >= 4 else None


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_a_frame_nested_a_thousand_deep_is_refused_and_the_service_lives_on(env):
    sock = _raw(env)
    sock.sendall(_frame(b'{"op":"status","x":' + b"[" * 1000 + b"]" * 1000 + b"}"))
    reply = _reply(sock)
    sock.close()
    assert reply is not None and "nested deeper" in reply["refused"]
    assert "jobs_served" in status(env)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the service's descriptors in /proc")
def test_descriptors_sent_with_a_frame_that_does_not_use_them_are_closed(env):
    pid = status(env)["pid"]
    before = _fds(pid)
    read_end, write_end = os.pipe()
    frames = [b'{"op":"status"}', b'{"op":"stop-nothing"}', b'{"op":"run","key":"x"}']
    for i in range(50):
        sock = _raw(env)
        socket.send_fds(sock, [_frame(frames[i % len(frames)])], [write_end] * 4)
        reply = _reply(sock)
        sock.close()
        assert reply is not None and ("status" in reply or "refused" in reply)
    sock = _raw(env)  # more descriptors than any frame takes
    socket.send_fds(sock, [_frame(b'{"op":"status"}')], [write_end] * 8)
    assert "refused" in _reply(sock)
    sock.close()
    os.close(write_end)
    os.set_blocking(read_end, False)
    assert os.read(read_end, 1) == b""  # end of file: no copy of the write end is left open in the service
    os.close(read_end)
    assert _fds(pid) <= before + 1


def test_a_client_trickling_its_request_holds_up_no_other_and_is_dropped(env, plate):
    sock = _raw(env)
    frame = _frame(b'{"op":"status"}')
    sent, completed = [], []

    def trickle() -> None:  # a byte every half second: the frame would take 9 s
        try:
            for byte in frame:
                sock.send(bytes([byte]))
                sent.append(byte)
                time.sleep(0.5)
            completed.append(time.monotonic())
        except OSError:  # the service dropped it
            pass

    thread = threading.Thread(target=trickle)
    thread.start()
    while len(sent) < 2 and thread.is_alive():
        time.sleep(0.01)
    served = oxi(env, "info", str(plate), "--json")
    answered = time.monotonic()
    thread.join(60)
    assert served.returncode == 0 and json.loads(served.stdout)["path"] == str(plate), served.stderr
    assert not completed or completed[0] > answered  # the other call was answered while this one trickled
    assert not completed  # and the trickler was dropped before its frame was whole
    reply = _reply(sock)
    sock.close()
    assert reply is None or "no whole request" in reply["refused"]


def test_connections_that_never_send_are_dropped_within_seconds(env):
    silent = [_raw(env) for _ in range(200)]
    waiting = set(silent)
    deadline = time.monotonic() + 60
    while waiting and time.monotonic() < deadline:
        readable, _, _ = select.select(list(waiting), [], [], 1.0)
        waiting -= set(readable)  # the service answered or closed it
    for sock in silent:
        sock.close()
    assert not waiting, f"{len(waiting)} of 200 silent connections still open after 60 s"
    assert "jobs_served" in status(env)


def test_server_stop_removes_the_listener_at_once_and_running_jobs_finish(tmp_path, big, plate):
    env = _runtime_env(tmp_path)
    assert oxi(env, "server", "start").returncode == 0
    first = status(env)
    out = tmp_path / "blurred.exr"
    job = subprocess.Popen([*OXI_CMD, "blur", str(big), str(out), "--sigma", "6"], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while status(env)["jobs_running"] == 0 and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert oxi(env, "server", "stop").returncode == 0
    assert not Path(first["socket"]).exists()
    with pytest.raises(OSError):
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(first["socket"])
    alone = oxi({**env, "OXI_SERVER": "auto"}, "info", str(plate))  # no service to wait for: it runs itself
    assert alone.returncode == 0 and str(plate).encode() in alone.stdout
    again = oxi(env, "info", str(plate))  # `on`: a new service starts while the old one finishes its job
    assert again.returncode == 0 and status(env)["pid"] != first["pid"]
    assert job.wait(timeout=300) == 0, job.stderr.read()
    assert out.exists()
    oxi(env, "server", "stop")


def test_oxi_server_on_waits_once_for_a_service_that_cannot_start(tmp_path, plate):
    env = _runtime_env(tmp_path, XDG_CACHE_HOME=str(tmp_path / "cache"))
    # Nothing can listen where the socket goes (as in a full folder): each service started fails.
    os.mkdir(paths.socket_path(paths.runtime_dir(env), paths.build_key(env)))
    done = oxi(env, "info", str(plate))
    assert done.returncode == 0 and str(plate).encode() in done.stdout, done.stderr
    log = Path(paths.log_path(env)).read_text()
    assert log.count("Traceback") == 1, log  # one service started and waited for, not one per attempt


@pytest.mark.parametrize("cluster", [["--cluster=local:1"], ["--cluster", "local:1"], []])
def test_a_cluster_batch_given_in_any_spelling_is_handed_back_to_its_client_untouched(tmp_path, plate, cluster):
    """Where a job runs that needs parsed options is decided by the worker that parsed them: its client runs it."""
    out = tmp_path / "out.exr"
    code = (
        "import sys\n"
        "from oxi_cli.service import handback\n"
        "handback.in_worker()\n"
        f"sys.argv = ['oxi', 'cdl', {str(plate)!r}, {str(out)!r}, '--slope', '2', *{cluster!r}]\n"
        "from oxi_cli.cli.main import run_command\n"
        "try:\n"
        "    run_command()\n"
        "except handback.RunInOwnProcess as e:\n"
        "    print('handed back:', e)\n"
    )
    env = {**os.environ, "OXI_BACKEND": "cpu", **({} if cluster else {"OXI_CLUSTER": "local:1"})}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout == "handed back: a --cluster batch runs in its own process\n", done.stderr
    assert not out.exists() and done.stderr == ""


def test_a_served_cluster_batch_runs_in_its_clients_own_process(env, plate, tmp_path):
    pytest.importorskip("distributed")
    before = status(env)["jobs_handed_back"]
    out = tmp_path / "out.exr"
    done = oxi(env, "cdl", str(plate), str(out), "--slope", "2", "--cluster=local:1")
    assert done.returncode == 0 and out.exists(), done.stderr
    assert status(env)["jobs_handed_back"] == before + 1
