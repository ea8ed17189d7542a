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


def start_service(folder: str | None = None, key: str | None = None) -> bool:
    """Start this build's service in the background (its own session, output to the service log); False
    where no private runtime folder exists."""
    import subprocess

    folder = folder or paths.runtime_dir()
    if folder is None:
        return False
    key = key or paths.build_key()
    log = paths.log_path()
    os.makedirs(os.path.dirname(log), mode=0o700, exist_ok=True)
    with contextlib.suppress(OSError):
        if os.stat(log).st_size > 8 << 20:
            os.replace(log, log + ".1")
    with open(log, "ab") as out:
        subprocess.Popen(
            [sys.executable, "-m", "oxi_cli.service.server", folder, key],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd="/", start_new_session=True, close_fds=True,
        )
    return True





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
    return found


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
