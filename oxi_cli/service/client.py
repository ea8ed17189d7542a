"""The `oxi` command: hands the command line to this user's warm service when one runs, else runs it here.

Imports only the interpreter's own modules until it knows where the job runs (service/link.py says why): the
service's reply costs tens of milliseconds, a process of our own imports numpy, Numba, OpenEXR and Typer first.
"""

from __future__ import annotations

import _signal
import os
import sys

from oxi_cli.service import link, paths

START_SECONDS = 60.0  # how long `on` waits for a new service (its first start compiles bytecode)
# Commands that run here whatever the mode: the service's own controls, and a Dask worker that lives for hours.
LOCAL_COMMANDS = ("server", "worker")
# Forwarded to the job as its Ctrl-C (a closed terminal's SIGHUP too; Windows has no SIGHUP).
_SIGNALS = tuple(getattr(_signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(_signal, name))


def main() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    environ = dict(os.environ)  # the service a job of ours starts gets this, not what the job left behind
    chosen = link.mode()
    local = chosen == "off" or bool(args and args[0] in LOCAL_COMMANDS) or "--cluster" in args or bool(
        os.environ.get("OXI_CLUSTER")) or _memory_limited()
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
    }
    try:
        link.send(sock, request, fds=(0, 1, 2))
    except (OSError, ValueError, TypeError):  # a closed standard stream, an unencodable argument
        sock.close()
        return None

    def forward(signum: int, frame: object) -> None:
        try:
            link.send(sock, {"signal": "INT"})
        except OSError:
            pass

    for sig in _SIGNALS:
        _signal.signal(sig, forward)
    try:
        reply = link.recv(sock)
    except (OSError, ValueError):
        reply = None
    finally:
        for sig in _SIGNALS:
            _signal.signal(sig, _signal.default_int_handler if sig == _signal.SIGINT else _signal.SIG_DFL)
        sock.close()
    if reply is not None and isinstance(reply.get("exit"), int):
        return reply["exit"]
    if reply is not None and "refused" in reply:
        return None
    try:
        os.write(2, f"oxi: warning: the oxi service stopped during the job (see {paths.log_path()}); "
                    "running it here\n".encode())
    except OSError:
        pass
    return None


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
