"""The client's end of the service's socket, built from the interpreter's own C modules: every call of the `oxi`
command pays this module's imports, so it avoids socket.py, signal.py, json and hashlib (their enum, selectors
and OpenSSL imports cost the client more than the rest of its work). The frames are protocol.py's."""

from __future__ import annotations

import _socket
import os
import sys

from oxi_cli.service import paths

ENV = "OXI_SERVER"  # off: never; on: always (start one and wait); auto (default): use one, start one from a terminal
_HEADER = 4  # bytes of a frame's big-endian length


def mode(environ: dict[str, str] | None = None) -> str:
    value = (os.environ if environ is None else environ).get(ENV, "auto").strip().lower()
    if value in ("0", "off", "no", "false"):
        return "off"
    if value in ("1", "on", "yes", "true"):
        return "on"
    return "auto"


def connect(folder: str, key: str) -> _socket.socket | None:
    """The service's socket, or None; a socket file left by a service that died is removed."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(paths.socket_path(folder, key))
        return sock
    except OSError as e:
        sock.close()
        if e.errno == 111:  # ECONNREFUSED: nobody listens on it
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


def send(sock: _socket.socket, message: dict, fds: tuple[int, ...] = ()) -> None:
    """One frame (protocol.py's format), with `fds` passed beside it."""
    data = dumps(message).encode("utf-8", "surrogateescape")
    frame = len(data).to_bytes(_HEADER, "big") + data
    if fds:
        # C ints in native order, as array("i", fds) would give without importing array (collections comes with it)
        rights = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)
        sent = sock.sendmsg([frame], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        frame = frame[sent:]
    while frame:
        frame = frame[sock.send(frame):]


def recv(sock: _socket.socket) -> dict | None:
    """One frame's object, or None when the socket closed first. The service's usual frames, one whole number
    ({"worker":PID}, then {"exit":N}), are read without json."""
    head = _exactly(sock, _HEADER)
    if head is None:
        return None
    body = _exactly(sock, int.from_bytes(head, "big"))
    if body is None:
        return None
    name, colon, number = body[2:-1].partition(b'":')
    if body.startswith(b'{"') and body.endswith(b"}") and colon and name.isalpha() and number.isdigit():
        return {name.decode(): int(number)}
    import json

    found = json.loads(body.decode("utf-8", "surrogateescape"))
    return found if isinstance(found, dict) else None


def _exactly(sock: _socket.socket, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


_ESCAPES = {i: f"\\u{i:04x}" for i in range(32)} | {ord('"'): '\\"', ord("\\"): "\\\\"}


def dumps(value: object) -> str:
    """JSON for the str, int, bool, list and dict values a request holds (json.dumps without its imports)."""
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPES) + '"'
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(dumps(str(k)) + ":" + dumps(v) for k, v in value.items()) + "}"
    raise TypeError(f"cannot send {type(value).__name__} in a frame")


def stdio_encodings() -> list[dict[str, str]]:
    """The encoding and error handler of this process's stdin, stdout and stderr, for the worker's streams."""
    found = []
    for stream, default in ((sys.stdin, "strict"), (sys.stdout, "strict"), (sys.stderr, "backslashreplace")):
        found.append({
            "encoding": getattr(stream, "encoding", None) or "utf-8",
            "errors": getattr(stream, "errors", None) or default,
        })
    return found
