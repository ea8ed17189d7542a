"""`oxi server start|stop|status`: ask this user's services how they are, start one, stop them."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from typing import Any

from oxi_cli.service import paths, protocol
from oxi_cli.service.link import mode

START_SECONDS = 60.0  # how long `on` waits for a new service (its first start compiles bytecode)


def start_service(folder: str | None = None, key: str | None = None, environ: dict[str, str] | None = None) -> bool:
    """Start this build's service in the background (its own session, output to the service log) with exactly
    the environment `environ` (default: this process's), which its key is made from; False where no private
    runtime folder exists. A log that fails trust.open_log is not used: the service then writes to the
    starter's terminal, if it has one, else nowhere (`oxi server status` says why)."""
    import subprocess

    env = dict(os.environ if environ is None else environ)
    folder = folder or paths.runtime_dir(env)
    if folder is None:
        return False
    key = key or paths.build_key(env)
    out, _ = open_log(env)
    try:
        subprocess.Popen(
            [sys.executable, "-m", "oxi_cli.service.server", folder, key],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL if out is None else out,
            stderr=out if out is not None else None if os.isatty(2) else subprocess.DEVNULL,
            cwd="/", start_new_session=True, close_fds=True, env=env,
        )
    finally:
        if out is not None:
            os.close(out)
    return True


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


def _ask(sock_path: str, op: str) -> dict[str, Any] | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(5.0)
    try:
        sock.connect(sock_path)
        protocol.send(sock, {"op": op})
        reply, _ = protocol.recv(sock)
        return reply
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
    reply = _ask(own, "status") if os.path.exists(own) else None
    found: dict[str, Any] = {"running": reply is not None, "other_builds": len(others), "mode": mode(environ)}
    if reply is not None:
        found.update(reply.get("status", {}))
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
    """Start this build's service unless it runs, and wait until it answers."""
    found = status()
    if found["running"] or "reason" in found:
        return found
    start_service()
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(0.1)
        found = status()
        if found["running"]:
            return found
    return found


def stop() -> int:
    """Stop every service of this user's (any build); how many answered. Running jobs finish first."""
    folder = paths.runtime_dir()
    if folder is None:
        return 0
    stopped = sum(_ask(path, "stop") is not None for path in _sockets(folder))
    return stopped
