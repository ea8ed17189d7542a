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

from oxi_cli.service import paths, protocol

# Forwarded to the job as its Ctrl-C (a closed terminal's SIGHUP too; Windows has no SIGHUP).
_SIGNALS = tuple(getattr(_signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(_signal, name))
# Set (`python -X oxi-tried ...`) on the command started again with site after the service was tried: it runs
# the job itself without asking or waiting for a service again.
_TRIED = "oxi-tried"


def main() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    environ = dict(os.environ)  # the service a job of ours starts gets this, not what the job left behind
    chosen = paths.mode()
    here = chosen == "off" or args[:1] == ["server"] or _memory_limited()
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


def _memory_limited() -> bool:
    """Whether this process runs under a memory limit (`ulimit -d` or `-v`, a farm's h_vmem): its job then runs
    here, under that limit, as the caller set it; a service worker lives under its own."""
    try:
        import resource
    except ImportError:  # no such limits on this platform
        return False
    return any(resource.getrlimit(limit)[0] != resource.RLIM_INFINITY
               for limit in (resource.RLIMIT_DATA, resource.RLIMIT_AS))


def _starts_itself() -> bool:
    """Where `auto` starts a service after running a job itself: a person at a terminal, not CI or a farm
    script (those use one that runs, or `oxi server start` / OXI_SERVER=on)."""
    if os.environ.get("CI"):
        return False
    try:
        return os.isatty(2)
    except OSError:
        return False


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
    """Send the job with our standard streams and forward Ctrl-C; its exit status, or None to run it here (the
    service refused it, handed it back, or ended before a worker took it). A job a worker started is never run
    again: if the worker dies, that is said in one line and the status is 1."""
    try:
        cwd = os.getcwd()
    except OSError:  # a working folder deleted under us: a run of our own meets it as the user would
        sock.close()
        return None
    request = {
        "op": "run", "protocol": protocol.PROTOCOL, "key": key, "argv": args, "cwd": cwd, "env": dict(os.environ),
        "umask": _umask(), "streams": _stdio_encodings(), "prog": _program_name(),
    }
    try:
        protocol.send(sock, request, fds=(0, 1, 2))
    except (OSError, ValueError, TypeError, protocol.ProtocolError):  # a closed stream, an unencodable argument
        sock.close()
        return None

    def forward(signum: int, frame: object) -> None:
        try:
            protocol.send(sock, {"signal": "INT"})
        except OSError:
            pass

    for sig in _SIGNALS:
        _signal.signal(sig, forward)
    started, written, reply = False, 0, None
    try:
        _until_closed(sock)
        while reply is None and (message := protocol.recv(sock)) is not None:
            if "started" in message:
                started = True
            elif "wrote" in message:
                written = message["wrote"]
            else:
                reply = message
    except (OSError, protocol.ProtocolError):
        pass
    finally:
        for sig in _SIGNALS:
            _signal.signal(sig, _signal.default_int_handler if sig == _signal.SIGINT else _signal.SIG_DFL)
        sock.close()
    if reply is not None and isinstance(reply.get("exit"), int):
        return reply["exit"]
    if reply is not None and "refused" in reply or not started:
        return None
    files = f"{written} file{'' if written == 1 else 's'}"
    try:
        os.write(2, f"oxi: error: the oxi service's worker ended during the job, after writing {files}; it was not "
                    f"run again (see {paths.log_path()})\n".encode())
    except OSError:
        pass
    return 1


def _until_closed(sock: object) -> None:
    """Sleep until the worker has closed its end (after its last frame, or by dying): the frames it sends as the job
    goes (started, each file written) are read then, all at once. A read per frame would wake this process in
    the middle of the job, on a loaded machine taking the worker's turn on a core each time."""
    try:
        import select

        waiting = select.poll()
        waiting.register(sock.fileno(), select.POLLRDHUP)
        waiting.poll()
    except (ImportError, AttributeError, OSError):  # no POLLRDHUP (macOS): frames are read as they come
        pass


def _stdio_encodings() -> list[dict[str, str]]:
    """The encoding and error handler of this process's stdin, stdout and stderr, for the worker's streams."""
    found = []
    for stream, default in ((sys.stdin, "strict"), (sys.stdout, "strict"), (sys.stderr, "backslashreplace")):
        found.append({
            "encoding": getattr(stream, "encoding", None) or "utf-8",
            "errors": getattr(stream, "errors", None) or default,
        })
    return found


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
