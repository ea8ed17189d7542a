"""Nobody else's way in: caches and logs that someone else could change are not used, by a command of its own or a
served one, however long the service has run; the service runs in exactly the environment its client had.

Tried as an attacker would: real folders, a second user (made here when run as root, as CI runs), real pickles
that would run a command, links to another file, real `oxi` processes."""

from __future__ import annotations

import json
import os
import pickle
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from oxi_cli import trust
from oxi_cli.service import control, paths
from tests.cli.conftest import OXI, hdr_rgba, write_exr

OXI_CMD = [OXI] if OXI else [sys.executable, "-m", "oxi_cli"]


def oxi(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*OXI_CMD, *args], env=env, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def other_user() -> Iterator[pwd.struct_passwd]:
    """A second local user, made for these tests and removed after them."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("a second user is made with useradd as root (CI runs as root)")
    name = f"oxit{os.getpid()}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name], check=True, capture_output=True)
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder under /tmp that other users may enter (pytest's own tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="oxi-trust-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class _Planted:
    """Unpickled, runs a command: the first object of a Numba index file is unpickled when a kernel loads."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # noqa: ANN204
        return (os.system, (f"touch {self.marker}",))


def _as(user: pwd.struct_passwd, *argv: str) -> None:
    """A command run as `user` (the system's own tools: this interpreter may lie in a folder only root enters)."""
    done = subprocess.run(argv, user=user.pw_uid, group=user.pw_gid, extra_groups=[], capture_output=True,
                          text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr


def test_a_kernel_cache_swapped_under_a_running_service_never_runs_its_pickles(other_user, base):
    """The service chose its kernel cache when the folders above it were the victim's alone; then the shared
    folder above became writable by others (a project cache, a mis-set farm home), and another user moved the
    victim's cache aside and put his own in its place, `oxi/kernels` a link to his tree of index files that run
    a command. The next served job (a fresh worker) and a job of its own both run, and neither runs his code."""
    shared = base / "shared"
    shared.mkdir(mode=0o755)
    run = base / "run"
    run.mkdir(mode=0o700)
    env = {**os.environ, "XDG_CACHE_HOME": str(shared / "cache"), "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on",
           "OXI_BACKEND": "cpu", "OXI_WAIT_FOR_KERNELS": "0"}
    env.pop("OXI_KERNEL_CACHE", None)
    built = subprocess.run([sys.executable, "-m", "oxi_cli.backends.cpu.compile", "cdl", "half"], env=env,
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr
    plate = write_exr(base / "plate.exr", hdr_rgba(37, 53), shot="sh010")
    try:
        assert oxi(env, "server", "start").returncode == 0
        # His tree: the victim's kernels as he would build them himself, every index file his pickle.
        marker = base / "ran"
        evil = base / "evil"
        shutil.copytree(shared / "cache" / "oxi" / "kernels", evil)
        planted = list(evil.rglob("*.nbi"))
        assert planted
        for index in planted:
            index.write_bytes(pickle.dumps(_Planted(marker)))
        subprocess.run(["chown", "-R", f"{other_user.pw_uid}:{other_user.pw_gid}", str(evil)], check=True)
        shared.chmod(0o777)
        _as(other_user, "mv", str(shared / "cache"), str(shared / "moved"))
        _as(other_user, "mkdir", "-p", str(shared / "cache" / "oxi"))
        _as(other_user, "ln", "-s", str(evil), str(shared / "cache" / "oxi" / "kernels"))
        for mode in ("on", "off"):
            done = oxi({**env, "OXI_SERVER": mode}, "cdl", str(plate), str(base / f"{mode}.exr"), "--slope", "1.1")
            assert done.returncode == 0, done.stderr
            assert (base / f"{mode}.exr").exists()
            assert not marker.exists(), f"his pickle ran in a job with OXI_SERVER={mode}"
        assert control.status(env)["jobs_served"] == 1
    finally:
        shared.chmod(0o755)
        oxi(env, "server", "stop")


def test_a_service_log_that_is_a_link_is_never_written_through(tmp_path):
    """`service.log` made a link to another file: the service starts, the linked file is left as it was, and
    `oxi server status` says the log is not used and why."""
    cache = tmp_path / "cache"
    (cache / "oxi").mkdir(parents=True, mode=0o700)
    victim = tmp_path / "notes.txt"
    victim.write_text("precious\n")
    (cache / "oxi" / "service.log").symlink_to(victim)
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "XDG_RUNTIME_DIR": str(run), "OXI_BACKEND": "cpu"}
    try:
        started = oxi(env, "server", "start")
        assert started.returncode == 0, started.stderr
        said = oxi(env, "server", "status").stdout.decode()
        assert "running" in said and "is not used" in said and "link" in said, said
        assert json.loads(oxi(env, "server", "status", "--json").stdout)["log_refused"]
    finally:
        oxi(env, "server", "stop")
    assert victim.read_text() == "precious\n"
    assert (cache / "oxi" / "service.log").is_symlink()


def test_probe_says_which_caches_and_logs_are_not_used_and_why(base):
    """A cache folder under one that others may write into: `oxi probe` names each cache it does not use."""
    shared = base / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    env = {**os.environ, "XDG_CACHE_HOME": str(shared / "cache"), "OXI_BACKEND": "cpu", "OXI_SERVER": "off"}
    env.pop("OXI_KERNEL_CACHE", None)
    done = oxi(env, "probe", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["kernel_cache"]["path"] is None and str(shared) in doc["kernel_cache"]["line"]
    problems = " ".join(doc["problems"])
    assert "LUT cache not used" in problems and "service log not used" in problems and str(shared) in problems
    assert "not used" in doc["rates"]["note"] if "note" in doc["rates"] else True
    assert not (shared / "cache" / "oxi" / "kernels").exists()


def test_every_folder_from_the_root_down_is_judged(base):
    mine = base / "a" / "b"
    mine.mkdir(parents=True)
    assert trust.why_untrusted(mine / "not-yet" / "made") is None
    assert trust.why_untrusted("/tmp") is None  # sticky: others cannot move what is not theirs
    (base / "a").chmod(0o777)
    assert "other users may write into" in trust.why_untrusted(mine / "c")
    (base / "a").chmod(0o1777)
    assert trust.why_untrusted(mine) is None
    (base / "a").chmod(0o755)
    link = base / "link"
    link.symlink_to(base / "a" / "b")
    assert trust.why_untrusted(link / "x") is None
    (base / "a").chmod(0o777)
    assert trust.why_untrusted(link / "x") is not None  # the folder it leads through
    (base / "a").chmod(0o755)


def test_a_link_or_folder_of_another_user_is_not_trusted(other_user, base):
    theirs = base / "theirs"
    theirs.mkdir()
    os.chown(theirs, other_user.pw_uid, other_user.pw_gid)
    assert "another user" in trust.why_untrusted(theirs / "cache")
    (base / "mine").mkdir()
    link = base / "link"
    link.symlink_to(base / "mine")
    os.lchown(link, other_user.pw_uid, other_user.pw_gid)
    assert "link owned by another user" in trust.why_untrusted(link / "cache")


def test_a_log_is_opened_only_as_a_regular_file_of_this_user(tmp_path):
    target = tmp_path / "other.txt"
    target.write_text("x")
    (tmp_path / "linked.log").symlink_to(target)
    fd, why = trust.open_log(tmp_path / "linked.log")
    assert fd is None and "link" in why
    os.mkfifo(tmp_path / "fifo.log")
    fd, why = trust.open_log(tmp_path / "fifo.log")
    assert fd is None and why  # a FIFO nobody reads: never a log, never a wait
    fd, why = trust.open_log(tmp_path / "logs" / "ok.log")
    assert fd is not None and why == ""
    os.close(fd)
    assert (tmp_path / "logs" / "ok.log").stat().st_mode & 0o777 == 0o600


def test_the_service_a_call_starts_has_exactly_the_callers_environment(tmp_path):
    """The first call from a terminal with no XDG_RUNTIME_DIR (auto may look at the GPU, whose module once set
    one for the process): the service it starts afterwards has the caller's environment, listens where the
    caller looks, and `oxi server status` finds it."""
    temp = tmp_path / "tmp"
    temp.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "CI", "OXI_BACKEND", "OXI_SERVER")}
    env.update({"TMPDIR": str(temp), "XDG_CACHE_HOME": str(tmp_path / "cache"), "TERM": "xterm"})
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(37, 53), shot="sh010")
    master, slave = os.openpty()
    proc = subprocess.Popen([*OXI_CMD, "cdl", str(plate), str(tmp_path / "a.exr"), "--slope", "1.1"], env=env,
                            stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    output = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.close(master)
    assert proc.wait(timeout=300) == 0, output
    try:
        deadline = time.monotonic() + 120
        while not (found := control.status(env))["running"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert found["running"], found
        assert found["socket"].startswith(str(temp))
        raw = Path(f"/proc/{found['pid']}/environ").read_bytes()
        theirs = dict(item.split("=", 1) for item in raw.decode().split("\0") if item)
        from oxi_cli import COMMAND_DEFAULTS

        assert theirs == {**COMMAND_DEFAULTS, **env}
        assert found["key"] == paths.build_key(env)
    finally:
        oxi({**env, "OXI_SERVER": "on"}, "server", "stop")
