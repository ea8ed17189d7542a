"""The `oxi` command: hands the command line to this user's warm service when one runs, else runs it here.

Imports the standard library only until it knows where the job runs: the service's reply costs tens of
milliseconds, a process of our own imports numpy, Numba, OpenEXR and Typer first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time

from oxi_cli.service import paths, protocol
from oxi_cli.service.control import START_SECONDS, connect, mode, start_service

# Commands that run here whatever the mode: the service's own controls, and a Dask worker that lives for hours.
LOCAL_COMMANDS = ("server", "worker")


def main() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    chosen = mode()
    local = chosen == "off" or (args and args[0] in LOCAL_COMMANDS) or "--cluster" in args or os.environ.get(
        "OXI_CLUSTER")
    if not local:
        place = _service(start=chosen == "on")
        if place is not None:
            code = _run_there(*place, args)
            if code is not None:
                _exit(code)
    from oxi_cli.bytecode import use_own_cache

    use_own_cache()  # before numpy and Numba load (oxi_cli/bytecode.py)
    from oxi_cli.cli.main import _exit_now, run_command

    code = run_command()
    if not local and chosen == "auto" and _starts_itself():
        with contextlib.suppress(Exception):
            start_service()
    _exit_now(code)


def _starts_itself() -> bool:
    """Where `auto` starts a service after running a job itself: a person at a terminal, not CI or a farm
    script (those use one that runs, or `oxi server start` / OXI_SERVER=on)."""
    return not os.environ.get("CI") and _isatty(2)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _service(start: bool) -> tuple[socket.socket, str] | None:
    """A connection to this build's service (started first when `start`), with its key; None: run here."""
    folder = paths.runtime_dir()
    if folder is None:
        return None
    key = paths.build_key()
    sock = connect(folder, key)
    if sock is None and start:
        start_service(folder, key)
        deadline = time.monotonic() + START_SECONDS
        while sock is None and time.monotonic() < deadline:
            time.sleep(0.05)
            sock = connect(folder, key)
    return (sock, key) if sock is not None else None


def _streams() -> list[dict[str, str]]:
    found = []
    for stream, default in ((sys.stdin, "strict"), (sys.stdout, "strict"), (sys.stderr, "backslashreplace")):
        found.append({
            "encoding": getattr(stream, "encoding", None) or "utf-8",
            "errors": getattr(stream, "errors", None) or default,
        })
    return found


def _run_there(sock: socket.socket, key: str, args: list[str]) -> int | None:
    """Send the job with our standard streams and forward Ctrl-C; its exit status, or None to run it here
    (the service refused it or could not take our streams). A service that dies mid-job is said in one line."""
    request = {
        "op": "run", "protocol": protocol.PROTOCOL, "key": key, "argv": args, "cwd": os.getcwd(),
        "env": dict(os.environ), "umask": _umask(), "streams": _streams(), "prog": _program_name(),
    }
    try:
        protocol.send(sock, request, fds=[0, 1, 2])
    except (OSError, protocol.ProtocolError):
        sock.close()
        return None

    def forward(signum: int, frame: object) -> None:
        with contextlib.suppress(OSError):
            protocol.send(sock, {"signal": "INT"})

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    try:
        reply, _ = protocol.recv(sock)
    except (OSError, protocol.ProtocolError):
        reply = None
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL if sig != signal.SIGINT else signal.default_int_handler)
        sock.close()
    if reply is not None and isinstance(reply.get("exit"), int):
        return reply["exit"]
    if reply is not None and "refused" in reply:
        return None
    with contextlib.suppress(OSError):
        os.write(2, f"oxi: warning: the oxi service stopped during the job (see {paths.log_path()}); "
                    "running it here\n".encode())
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
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(code)
