"""The `oxi` command: hands the command line to this user's warm service when one runs, else runs it here.

Imports only the interpreter's own modules until it knows where the job runs (service/link.py says why): the
service's reply costs tens of milliseconds, a process of our own imports numpy, Numba, OpenEXR and Typer first.
"""

from __future__ import annotations

import _signal
import os
import sys

from oxi_cli.service import caller, link, paths

START_SECONDS = 60.0  # how long `on` waits for a new service (its first start compiles bytecode)
# Commands that run here whatever the mode: the service's own controls, and a Dask worker that lives for hours.
LOCAL_COMMANDS = ("server", "worker")
# Forwarded to the job by name, which takes each as its own process would (Windows has no SIGHUP).
_SIGNALS = {getattr(_signal, f"SIG{name}"): name for name in ("INT", "TERM", "HUP") if hasattr(_signal, f"SIG{name}")}
_WATCH_SECONDS = 0.5  # how often a waiting client makes sure its worker is not left stopped while it runs


def main() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    environ = dict(os.environ)  # the service a job of ours starts gets this, not what the job left behind
    chosen = link.mode()
    local = chosen == "off" or bool(args and args[0] in LOCAL_COMMANDS) or "--cluster" in args or bool(
        os.environ.get("OXI_CLUSTER")) or _closed_stdio()
    if not local:
        place = _service(start=chosen == "on")
        if place is not None:
            code = _run_there(*place, args)
            if code is not None:
                _exit(code)
    _with_site()
    from oxi_cli.bytecode import use_own_cache

    use_own_cache()  # before numpy and Numba load (oxi_cli/bytecode.py)
    from oxi_cli.cli.main import _exit_now, run_command

    code = run_command()
    if not local and chosen == "auto" and _starts_itself():
        try:
            from oxi_cli.service.control import start_service

            start_service(environ=environ)
        except Exception:  # a service that cannot start leaves this call's result as it is
            pass
    _exit_now(code)


def _with_site() -> None:
    """Started without site (bin/oxi's `python -S`): a job run here needs site-packages as a plain interpreter
    sets them up, .pth files and all, so the command starts again with site."""
    if sys.flags.no_site and sys.orig_argv[1:2] == ["-S"]:
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[2:]])


def _closed_stdio() -> bool:
    """Whether a standard descriptor is closed (`>&-`): the job then runs here, where the command answers it
    (cli/stdio.py); and the service's socket must not take its number."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            return True
    return False


def _starts_itself() -> bool:
    """Where `auto` starts a service after running a job itself: a person at a terminal, not CI or a farm
    script (those use one that runs, or `oxi server start` / OXI_SERVER=on)."""
    if os.environ.get("CI"):
        return False
    try:
        terminal = os.isatty(2)
    except OSError:
        return False
    # A call under `nice` or `taskset` would start a service as slow as itself for every later call (a process
    # cannot raise its priority back; service/caller.py refuses what the service cannot match).
    return terminal and os.getpriority(os.PRIO_PROCESS, 0) <= 0 and (
        not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) == os.cpu_count())


def _service(start: bool) -> tuple[object, str] | None:
    """A connection to this build's service (started first when `start`), with its key; None: run here."""
    folder = paths.runtime_dir()
    if folder is None:
        return None
    key = paths.build_key()
    sock = link.connect(folder, key)
    if sock is None and start:
        import time

        from oxi_cli.service.control import start_service

        start_service(folder, key)
        deadline = time.monotonic() + START_SECONDS
        while sock is None and time.monotonic() < deadline:
            time.sleep(0.05)
            sock = link.connect(folder, key)
    return (sock, key) if sock is not None else None


def _run_there(sock: object, key: str, args: list[str]) -> int | None:
    """Send the job with our standard streams and forward Ctrl-C; its exit status, or None to run it here
    (the service refused it or could not take our streams). A service that dies mid-job is said in one line."""
    try:
        cwd = os.getcwd()
    except OSError:  # a working folder deleted under us: a run of our own meets it as the user would
        sock.close()
        return None
    request = {
        "op": "run", "protocol": 1, "key": key, "argv": args, "cwd": cwd, "env": dict(os.environ),
        "umask": _umask(), "streams": link.stdio_encodings(), "prog": _program_name(),
        "caller": caller.of_this_process(),
    }
    try:
        link.send(sock, request, fds=(0, 1, 2))
    except (OSError, ValueError, TypeError):  # a closed standard stream, an unencodable argument
        sock.close()
        return None

    job = _Job(sock)
    try:
        reply = job.wait()
    finally:
        sock.close()
    if reply is not None and isinstance(reply.get("exit"), int):
        if isinstance(reply.get("signal"), int) and reply["signal"] in _SIGNALS:
            _end_by(reply["signal"])
        return reply["exit"]
    if reply is not None and "refused" in reply:
        return None
    try:
        os.write(2, f"oxi: warning: the oxi service stopped during the job (see {paths.log_path()}); "
                    "running it here\n".encode())
    except OSError:
        pass
    return None


class _Job:
    """The wait for a served job: our SIGINT, SIGTERM and SIGHUP forwarded to it; stopped (Ctrl-Z, SIGSTOP) and
    continued with us, as a process of its own would be (its worker stops itself while we are stopped)."""

    def __init__(self, sock: object) -> None:
        self.sock = sock
        self.worker = 0  # the worker's pid, once it says

    def forward(self, signum: int, frame: object) -> None:
        try:
            link.send(self.sock, {"signal": _SIGNALS[signum]})
        except OSError:
            pass

    def pause(self, signum: int, frame: object) -> None:
        """Ctrl-Z: stop the job, then ourselves (the default action, taken again)."""
        if self.worker:
            _kill(self.worker, _signal.SIGSTOP)
        _signal.signal(_signal.SIGTSTP, _signal.SIG_DFL)
        _kill(os.getpid(), _signal.SIGTSTP)
        _signal.signal(_signal.SIGTSTP, self.pause)

    def resume(self, signum: int = 0, frame: object = None) -> None:
        if self.worker:
            _kill(self.worker, _signal.SIGCONT)

    def wait(self) -> dict | None:
        """The job's last frame ({"exit": N}, or {"refused": why}); None when the service went away."""
        import select

        handlers = {sig: self.forward for sig in _SIGNALS}
        if hasattr(_signal, "SIGTSTP"):
            handlers |= {_signal.SIGTSTP: self.pause, _signal.SIGCONT: self.resume}
        for sig, handler in handlers.items():
            _signal.signal(sig, handler)
        try:
            while True:
                if not select.select([self.sock], [], [], _WATCH_SECONDS)[0]:
                    if self.worker and caller.stopped(self.worker):
                        self.resume()  # it stopped itself as we were continued (service/worker.py)
                    continue
                reply = link.recv(self.sock)
                if reply is None or "worker" not in reply:
                    return reply
                self.worker = reply["worker"] if isinstance(reply["worker"], int) else 0
        except (OSError, ValueError):
            return None
        finally:
            for sig in handlers:
                _signal.signal(sig, _signal.default_int_handler if sig == _signal.SIGINT else _signal.SIG_DFL)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _end_by(sig: int) -> None:
    """End as the job's own process did: by `sig` (SIGTERM, SIGHUP), its handler gone."""
    try:
        sys.stdout.flush()
    except Exception:  # a closed stdout: nothing of ours is in it
        pass
    _signal.signal(sig, _signal.SIG_DFL)
    os.kill(os.getpid(), sig)


def _program_name() -> str:
    """What Click would call this program in its usage lines: `oxi`, or `python -m oxi_cli`."""
    package = getattr(sys.modules.get("__main__"), "__package__", None)
    if package:
        return f"python -m {package}"
    return os.path.basename(sys.argv[0])


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def _exit(code: int) -> None:
    try:
        sys.stdout.flush()
    except Exception:  # a closed stdout: nothing of ours is in it
        pass
    os._exit(code)
