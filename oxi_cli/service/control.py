"""`oxi server start|stop|status`: ask this user's services how they are, start one, stop them."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any

from oxi_cli.service import paths, protocol

START_SECONDS = 60.0  # how long `on` and `oxi server start` wait for a new service (a first start compiles bytecode)
ASK_SECONDS = 5.0  # a service answers status and stop at once: one that does not in this long counts as none


def start_service(folder: str | None = None, key: str | None = None, environ: dict[str, str] | None = None) -> Any:
    """Start this build's service in the background (its own session, output to the service log) with exactly
    the environment `environ` (default: this process's), which its key is made from: its process (a
    subprocess.Popen), which exits at once when another service of this build holds the lock; None where no
    private runtime folder exists. A log that fails trust.open_log is not used: the service then writes to the
    starter's terminal, if it has one, else nowhere (`oxi server status` says why)."""
    import subprocess

    from oxi_cli import COMMAND_DEFAULTS

    env = {**COMMAND_DEFAULTS, **(os.environ if environ is None else environ)}  # as build_key counts them
    folder = folder or paths.runtime_dir(env)
    if folder is None:
        return None
    key = key or paths.build_key(env)
    out, _ = open_log(env)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "oxi_cli.service.server", folder, key],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL if out is None else out,
            stderr=out if out is not None else None if os.isatty(2) else subprocess.DEVNULL,
            cwd="/", start_new_session=True, close_fds=True, env=env,
        )
    finally:
        if out is not None:
            os.close(out)


def wait_for(started: Any, folder: str, key: str, seconds: float = START_SECONDS) -> Any:
    """A connection to this build's service once it listens: the one `started` (start_service's process), or
    another one already starting. None when none will: that process ended and nobody holds the build's lock (it
    could not start), or `seconds` passed. One wait, whatever comes of it."""
    path = paths.socket_path(folder, key)
    deadline = time.monotonic() + seconds
    while True:
        with contextlib.suppress(OSError):
            return protocol.connect(path)
        if started is None or time.monotonic() > deadline or (started.poll() is not None and not _locked(folder, key)):
            return None
        time.sleep(0.05)


def open_log(environ: dict[str, str] | None = None) -> tuple[int | None, str]:
    """The service log opened for appending (trust.open_log: never through a link, only in a folder nobody else
    can change), moved aside first when over 8 MiB; or None and why it is not used."""
    from oxi_cli.trust import open_log as open_trusted

    log = paths.log_path(environ)
    fd, why = open_trusted(log)
    if fd is not None and os.fstat(fd).st_size > 8 << 20:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.replace(log, log + ".1")
        fd, why = open_trusted(log)
    return fd, why


def _locked(folder: str, key: str) -> bool:
    """Whether a service of this build holds its lock (it is starting or running)."""
    import fcntl

    try:
        fd = os.open(paths.lock_path(folder, key), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def _ask(sock_path: str, op: str) -> dict[str, Any] | None:
    try:
        sock = protocol.connect(sock_path, timeout=ASK_SECONDS)
    except OSError:
        return None
    try:
        protocol.send(sock, {"op": op})
        return protocol.recv(sock)
    except (OSError, protocol.ProtocolError):
        return None
    finally:
        sock.close()


def _sockets(folder: str) -> list[str]:
    with contextlib.suppress(OSError):
        return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".sock"))
    return []


def status(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """This build's service (running or not) and how many services of other builds answer; `environ`: the
    environment a client would have (default: this process's)."""
    folder = paths.runtime_dir(environ)
    if folder is None:
        return {"running": False, "reason": "no private runtime folder (XDG_RUNTIME_DIR or the temporary folder)"}
    own = paths.socket_path(folder, paths.build_key(environ))
    others = [p for p in _sockets(folder) if p != own and _ask(p, "status") is not None]
    reply = (_ask(own, "status") or {}).get("status") if os.path.exists(own) else None
    running = isinstance(reply, dict)
    found: dict[str, Any] = {"running": running, "other_builds": len(others), "mode": paths.mode(environ)}
    if running:
        found.update(reply)
    elif os.path.exists(own):  # starting, stopping, or a socket left by a crash (the next call removes it)
        found["unanswered"] = f"{own} gave no status within {ASK_SECONDS:.0f} s"
    found["log"] = paths.log_path(environ)
    found["log_refused"] = log_refused(environ)
    return found


def log_refused(environ: dict[str, str] | None = None) -> str:
    """Why the service log is not used (the service writes to its own stderr instead), or ""."""
    from oxi_cli.trust import judge, why_untrusted

    log = paths.log_path(environ)
    why = why_untrusted(os.path.dirname(log))
    if why is None and os.path.lexists(log):
        why = judge(log) or (None if os.path.isfile(log) else f"{log} is not a regular file")
    return why or ""


def start(wait: float = START_SECONDS) -> dict[str, Any]:
    """Start this build's service unless it runs, and wait until it answers or cannot start."""
    found = status()
    if found["running"] or "reason" in found:
        return found
    folder, key = paths.runtime_dir(), paths.build_key()
    sock = wait_for(start_service(folder, key), folder, key, wait)
    if sock is not None:
        sock.close()
    return status()


def stop() -> int:
    """Stop every service of this user's (any build); how many answered. Running jobs finish first."""
    folder = paths.runtime_dir()
    if folder is None:
        return 0
    stopped = sum(_ask(path, "stop") is not None for path in _sockets(folder))
    return stopped
