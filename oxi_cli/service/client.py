"""The `oxi` command: hands the command line to this user's warm service when one runs, else runs it here.

Imports only the interpreter's own modules until it knows where the job runs (service/protocol.py says why): the
service's reply costs tens of milliseconds, a process of our own imports numpy, Numba, OpenEXR and Typer first.
It forwards argv as it is and parses none of it: a job that must run in a process of its own (a --cluster batch,
`oxi worker`) is handed back by the worker that parsed it, before it did anything. Only `oxi server` never goes
to the service: it is how the service is started, asked and stopped.
"""

from __future__ import annotations

import _signal
import errno
import os
import sys

from oxi_cli.service import caller, paths, protocol

# Forwarded to the job by name, which takes each as its own process would (Windows has no SIGHUP).
_SIGNALS = {getattr(_signal, f"SIG{name}"): name for name in ("INT", "TERM", "HUP") if hasattr(_signal, f"SIG{name}")}
_WATCH_SECONDS = 0.5  # how often a waiting client makes sure its worker is not left stopped while it runs
# Set (`python -X oxi-tried ...`) on the command started again with site after the service was tried: it runs
# the job itself without asking or waiting for a service again.
_TRIED = "oxi-tried"


def main() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    environ = dict(os.environ)  # the service a job of ours starts gets this, not what the job left behind
    chosen = paths.mode()
    here = chosen == "off" or args[:1] == ["server"] or _closed_stdio()
    if not here and _TRIED not in sys._xoptions:
        code = _served(args, start=chosen == "on")
        if code is not None:
            _exit(code)
    _with_site()
    from oxi_cli.bytecode import use_own_cache

    use_own_cache()  # before numpy and Numba load (oxi_cli/bytecode.py)
    from oxi_cli.cli.main import _exit_now, run_command

    code = run_command()
    if not here and chosen == "auto" and _starts_itself():
        _start_after_job(environ)
    _exit_now(code)


def _with_site() -> None:
    """Started without site (bin/oxi's `python -S`): a job run here needs site-packages as a plain interpreter
    sets them up, .pth files and all, so the command starts again with site, marked as having tried the service."""
    if sys.flags.no_site and sys.orig_argv[1:2] == ["-S"]:
        os.execv(sys.executable, [sys.executable, "-X", _TRIED, *sys.orig_argv[2:]])


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


def _start_after_job(environ: dict[str, str]) -> None:
    """Start this build's service for the next calls with the environment the client began with (`environ`),
    unless one answers (it handed this job back)."""
    folder = paths.runtime_dir(environ)
    if folder is None:
        return
    key = paths.build_key(environ)
    sock = _connect(folder, key)
    if sock is not None:
        sock.close()
        return
    try:
        from oxi_cli.service.control import start_service

        start_service(folder, key, environ)
    except Exception:  # a service that cannot start leaves this call's result as it is
        pass


def _served(args: list[str], start: bool) -> int | None:
    """The job's exit status from this build's service (started first when `start`); None: run it here."""
    folder = paths.runtime_dir()
    if folder is None:
        return None
    key = paths.build_key()
    sock = _connect(folder, key)
    if sock is None and start:
        sock = _start_and_connect(folder, key)
    return None if sock is None else _run_there(sock, key, args)


def _connect(folder: str, key: str) -> object | None:
    """A connection to this build's service, or None; a socket file left by a service that died is removed."""
    try:
        return protocol.connect(paths.socket_path(folder, key))
    except OSError as e:
        if e.errno == errno.ECONNREFUSED:  # nobody listens on it
            _remove_stale(folder, key)
        return None


def _remove_stale(folder: str, key: str) -> None:
    """Nobody holds the service's lock: its socket is a crash's leftover."""
    import fcntl

    try:
        fd = os.open(paths.lock_path(folder, key), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.unlink(paths.socket_path(folder, key))
    except OSError:
        pass
    finally:
        os.close(fd)


def _start_and_connect(folder: str, key: str) -> object | None:
    from oxi_cli.service.control import start_service, wait_for

    return wait_for(start_service(folder, key), folder, key)


def _run_there(sock: object, key: str, args: list[str]) -> int | None:
    """Send the job with our standard streams and what we share with it (service/caller.py), forward our signals;
    its exit status, or None to run it here (the service refused it, handed it back, or ended before a worker took
    it). A job a worker started is never run again: if the worker dies, that is said in one line and the status
    is 1."""
    try:
        cwd = os.getcwd()
    except OSError:  # a working folder deleted under us: a run of our own meets it as the user would
        sock.close()
        return None
    request = {
        "op": "run", "protocol": protocol.PROTOCOL, "key": key, "argv": args, "cwd": cwd, "env": dict(os.environ),
        "umask": _umask(), "streams": _stdio_encodings(), "prog": _program_name(),
        "caller": caller.of_this_process(),
    }
    try:
        protocol.send(sock, request, fds=(0, 1, 2))
    except (OSError, ValueError, TypeError, protocol.ProtocolError):  # a closed stream, an unencodable argument
        sock.close()
        return None

    job = _Job(sock)
    try:
        job.wait()
    finally:
        sock.close()
    reply = job.reply
    if reply is not None and isinstance(reply.get("exit"), int):
        if isinstance(reply.get("signal"), int) and reply["signal"] in _SIGNALS:
            _end_by(reply["signal"])
        return reply["exit"]
    if reply is not None and "refused" in reply or not job.started:
        return None
    files = f"{job.written} file{'' if job.written == 1 else 's'}"
    try:
        os.write(2, f"oxi: error: the oxi service's worker ended during the job, after writing {files}; it was not "
                    f"run again (see {paths.log_path()})\n".encode())
    except OSError:
        pass
    return 1


def _until_closed(sock: object, seconds: float) -> bool:
    """Sleep until the worker has closed its end (after its last frame, or by dying), or `seconds` passed: the
    frames it sends as the job goes (each file written) are read then, all at once. A read per frame would wake
    this process in the middle of the job, on a loaded machine taking the worker's turn on a core each time."""
    try:
        import select

        waiting = select.poll()
        waiting.register(sock.fileno(), select.POLLRDHUP)
        return bool(waiting.poll(int(seconds * 1000)))
    except (ImportError, AttributeError, OSError):  # no POLLRDHUP (macOS): frames are read as they come
        return True


def _stdio_encodings() -> list[dict[str, str]]:
    """The encoding and error handler of this process's stdin, stdout and stderr, for the worker's streams."""
    found = []
    for stream, default in ((sys.stdin, "strict"), (sys.stdout, "strict"), (sys.stderr, "backslashreplace")):
        found.append({
            "encoding": getattr(stream, "encoding", None) or "utf-8",
            "errors": getattr(stream, "errors", None) or default,
        })
    return found


class _Job:
    """The wait for a served job: our SIGINT, SIGTERM and SIGHUP forwarded to it; stopped (Ctrl-Z, SIGSTOP) and
    continued with us, as a process of its own would be (its worker stops itself while we are stopped)."""

    def __init__(self, sock: object) -> None:
        self.sock = sock
        self.started = False  # from then on the job is never run here
        self.worker = 0  # the worker's pid, as it said when it started the job
        self.written = 0  # files it said it wrote
        self.reply: dict | None = None  # its last frame: {"exit": N}, or {"refused": why}

    def forward(self, signum: int, frame: object) -> None:
        try:
            protocol.send(self.sock, {"signal": _SIGNALS[signum]})
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

    def wait(self) -> None:
        """Until the job's last frame, or the service went away (then `reply` stays None)."""
        handlers = {sig: self.forward for sig in _SIGNALS}
        if hasattr(_signal, "SIGTSTP"):
            handlers |= {_signal.SIGTSTP: self.pause, _signal.SIGCONT: self.resume}
        for sig, handler in handlers.items():
            _signal.signal(sig, handler)
        try:
            self._read(until_started=True)  # a queued job's wait: the worker's pid comes first thing
            while self.reply is None and self.started and not _until_closed(self.sock, _WATCH_SECONDS):
                if caller.stopped(self.worker):
                    self.resume()  # it stopped itself as we were continued (service/worker.py)
            self._read()
        except (OSError, protocol.ProtocolError):
            pass
        finally:
            for sig in handlers:
                _signal.signal(sig, _signal.default_int_handler if sig == _signal.SIGINT else _signal.SIG_DFL)

    def _read(self, until_started: bool = False) -> None:
        while self.reply is None and not (until_started and self.started):
            message = protocol.recv(self.sock)
            if message is None:
                return
            if "started" in message:
                self.started = True
                pid = message["started"]
                self.worker = pid if isinstance(pid, int) and pid > 0 else 0
            elif "wrote" in message:
                self.written = message["wrote"]
            else:
                self.reply = message


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
