"""A served call has exactly its caller's rights and limits, or runs as its own process: groups, resource limits,
nice value and CPUs of real clients (set with preexec_fn as `ulimit`, `nice` and `taskset` would), read back from
the outputs, the exit status and /proc of the worker running the job."""

from __future__ import annotations

import grp
import os
import re
import resource
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.cli.conftest import write_exr
from tests.service.conftest import OXI_CMD, oxi, status, wait_for

BOTH = ("off", "on")  # a process of its own, then the service


def run(env: dict, args: list[str], preexec=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*OXI_CMD, *args], env=env, capture_output=True, timeout=300, preexec_fn=preexec, **kw)



@pytest.fixture
def noisy(tmp_path: Path) -> Path:
    """640x480 RGBA half of noise: a 2+ MB output, over `ulimit -f 100`'s 100 KiB."""
    rng = np.random.default_rng(5)
    return write_exr(tmp_path / "noisy.exr", rng.uniform(0, 1, (480, 640, 4)).astype(np.float32))


@pytest.fixture
def group():
    """A group of this test's own (`proj`), made with groupadd (root only) and removed after."""
    if os.geteuid() != 0 or not shutil.which("groupadd"):
        pytest.skip("making a group needs root and groupadd (CI runs as root)")
    name = f"oxiproj{os.getpid()}"
    subprocess.run(["groupadd", name], check=True, capture_output=True)
    try:
        yield grp.getgrnam(name).gr_gid
    finally:
        subprocess.run(["groupdel", name], capture_output=True)


def with_groups(gid: int, groups: list[int]):
    def switch() -> None:
        os.setgroups(groups)
        os.setgid(gid)
    return switch


def own_service(tmp_path: Path, preexec=None) -> dict:
    """A service of this test's own, started by a process with `preexec`'s groups."""
    run_dir = tmp_path / "runtime"
    run_dir.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run_dir), "OXI_SERVER": "on", "OXI_BACKEND": "cpu"}
    assert run(env, ["server", "start"], preexec).returncode == 0
    return env


def test_a_caller_with_other_groups_than_the_service_runs_its_job_itself(group, plate, tmp_path):
    env = own_service(tmp_path, with_groups(0, [0, group]))  # started while the user had the group
    try:
        served = status(env)["jobs_served"]
        done = run(env, ["info", str(plate)], with_groups(0, [0, group]))
        assert done.returncode == 0 and status(env)["jobs_served"] == served + 1  # same groups: served
        done = run(env, ["info", str(plate)], with_groups(0, [0]))  # the user left the group since
        assert done.returncode == 0, done.stderr
        assert status(env)["jobs_served"] == served + 1  # ran in its own process, with its own groups
    finally:
        run(env, ["server", "stop"])


def test_a_caller_with_another_primary_group_writes_files_of_that_group(group, plate, tmp_path):
    env = own_service(tmp_path)
    try:
        out = tmp_path / "graded.exr"
        done = run(env, ["cdl", str(plate), str(out), "--slope", "1.1"], with_groups(group, []))  # `sg proj`
        assert done.returncode == 0, done.stderr
        assert out.stat().st_gid == group  # a worker would have written it as the service's group
    finally:
        run(env, ["server", "stop"])


def without_root_file_rights(groups: list[int]):
    """Root's processes with these groups and without the capabilities that bypass file permissions
    (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH dropped from the bounding set before exec), so a file's group decides
    whether they may read it, as it does for any user's."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def switch() -> None:
        for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")
        os.setgroups(groups)
    return switch


def test_a_caller_no_longer_in_a_group_cannot_read_its_files_through_the_service(group, plate, tmp_path):
    secret = tmp_path / "secret.exr"
    shutil.copy(plate, secret)
    os.chown(secret, 65534, group)  # nobody:proj 0640
    secret.chmod(0o640)
    if run(os.environ, ["--version"], without_root_file_rights([0])).returncode != 0:
        pytest.skip("cannot drop file capabilities here (no CAP_SETPCAP)")
    env = own_service(tmp_path, without_root_file_rights([0, group]))  # started while the user had the group
    try:
        assert run(env, ["info", str(secret)], without_root_file_rights([0, group])).returncode == 0
        done = run(env, ["info", str(secret)], without_root_file_rights([0]))  # removed from `proj` since
        assert done.returncode == 2 and b"ermission denied" in done.stderr, done.stderr
    finally:
        run(env, ["server", "stop"])


def _limit(which: int, value: int):
    def apply() -> None:
        resource.setrlimit(which, (value, value))  # as `ulimit -f 100` sets both
    return apply


def _outputs(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "noisy.exr")


def test_the_callers_file_size_limit_holds_for_its_served_job(env, noisy, tmp_path):
    results = []
    for mode in BOTH:
        done = run({**env, "OXI_SERVER": mode}, ["cdl", str(noisy), str(tmp_path / "big.exr"), "--slope", "2"],
                   _limit(resource.RLIMIT_FSIZE, 100 * 1024))
        stderr = re.sub(rb"oxi-tmp-[0-9]+-\w+", b"oxi-tmp-N", done.stderr)  # the temporary's name: pid, random
        results.append((done.returncode, stderr, _outputs(tmp_path)))
    assert results[0] == results[1]
    assert results[0][0] == 1 and b"File too large" in results[0][1] and results[0][2] == []


def test_the_callers_open_files_limit_holds_for_its_served_job(env, noisy, tmp_path):
    shots = tmp_path / "shots"
    shots.mkdir()
    for i in range(16):
        (shots / f"s{i:02d}.exr").symlink_to(noisy)
    for mode in BOTH:  # eight files open at once do not fit `ulimit -n 12`
        out = tmp_path / f"out-{mode}"
        out.mkdir()
        done = run({**env, "OXI_SERVER": mode}, ["cdl", str(shots), "-o", str(out), "--slope", "2", "--jobs", "8"],
                   _limit(resource.RLIMIT_NOFILE, 12))
        assert done.returncode == 1, (mode, done.stderr)
        assert not list(out.glob(".*oxi-tmp*"))


def test_a_caller_under_a_cpu_time_limit_runs_its_job_itself_and_is_stopped_by_it(env, big, tmp_path):
    served = status(env)["jobs_served"]
    for mode in BOTH:
        done = run({**env, "OXI_SERVER": mode}, ["blur", str(big), str(tmp_path / "o.exr"), "--sigma", "30"],
                   _limit(resource.RLIMIT_CPU, 1))
        assert done.returncode < 0, (mode, done.returncode, done.stderr)  # SIGXCPU, then SIGKILL at the hard limit
        # No output; the kernel's kill may leave a temporary (a later run clears it), as SIGKILL would.
        assert list(tmp_path.glob("o*")) == []
    assert status(env)["jobs_served"] == served


def _nice_and_cpus(pid: int) -> tuple[int, str] | None:
    """Nice value and CPU list of a process or thread, from /proc; None for one that ended meanwhile."""
    try:
        nice = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[16])
        status_ = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return None
    cpus = next(line.split(":")[1] for line in status_.splitlines() if line.startswith("Cpus_allowed_list"))
    return nice, cpus.strip()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="taskset to one CPU needs a choice of two")
def test_a_served_job_runs_at_the_callers_nice_value_on_its_cpus(env, big, tmp_path):
    cpu = min(os.sched_getaffinity(0))

    def nice_taskset() -> None:  # nice -n 19 taskset -c CPU oxi ...
        os.nice(19)
        os.sched_setaffinity(0, {cpu})

    oxi(env, "server", "start")
    served = status(env)["jobs_served"]
    proc = subprocess.Popen([*OXI_CMD, "blur", str(big), str(tmp_path / "o.exr"), "--sigma", "20"], env=env,
                            stderr=subprocess.PIPE, preexec_fn=nice_taskset)
    try:
        workers = wait_for(lambda: status(env)["jobs_served"] > served and status(env)["busy_worker_pids"],
                           "the job to start in a worker")
        assert _nice_and_cpus(workers[0]) == (19, str(cpu))
        tasks = os.listdir(f"/proc/{workers[0]}/task")  # every thread of it: Linux keeps both per thread
        assert {_nice_and_cpus(int(t)) for t in tasks} <= {(19, str(cpu)), None}
    finally:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
    wait_for(lambda: not status(env)["jobs_running"], "the worker to finish")
    assert all(_nice_and_cpus(pid)[0] == 0 for pid in status(env)["worker_memory_bytes"])  # not for later jobs


def test_a_client_claiming_the_services_groups_is_judged_by_the_kernels_word(group, tmp_path):
    import socket

    from oxi_cli.service import caller, paths, protocol

    env = own_service(tmp_path, with_groups(0, [0, group]))
    try:
        claimed = {**caller.of_this_process(), "gid": 0, "groups": [0, group]}  # the service's, not this process's
        request = {"op": "run", "protocol": protocol.PROTOCOL, "key": status(env)["key"], "argv": ["--version"],
                   "cwd": str(tmp_path), "env": env, "umask": 0o022, "prog": "oxi", "caller": claimed,
                   "streams": [{"encoding": "utf-8", "errors": "strict"}] * 3}
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(paths.socket_path(paths.runtime_dir(env), status(env)["key"]))
        protocol.send(sock, request, fds=[0, 1, 2])
        reply = protocol.recv(sock)
        sock.close()
        assert "groups differ" in reply["refused"]
    finally:
        run(env, ["server", "stop"])
