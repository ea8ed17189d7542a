"""The service's wire format: length-prefixed JSON frames on a Unix socket, file descriptors passed beside them.

No pickle and no code crosses the socket: a frame is a JSON object of bounded size, checked field by field.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
from typing import Any

from oxi_cli.service import caller

PROTOCOL = 1
MAX_FRAME = 1 << 20  # argv and environment of any real command line fit many times over
MAX_FDS = 4
MAX_ARGS = 65536
_HEADER = struct.Struct("!I")


class ProtocolError(Exception):
    """A peer sent something that is not an oxi frame (or vanished mid-frame)."""


def send(sock: socket.socket, message: dict[str, Any], fds: list[int] | tuple[int, ...] = ()) -> None:
    data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogateescape")
    if len(data) > MAX_FRAME:
        raise ProtocolError(f"a frame of {len(data)} bytes is over the {MAX_FRAME}-byte limit")
    frame = _HEADER.pack(len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [frame], list(fds))
        frame = frame[sent:]
    if frame:
        sock.sendall(frame)


def recv(sock: socket.socket, want_fds: bool = False) -> tuple[dict[str, Any] | None, list[int]]:
    """One frame and the descriptors sent with it; (None, []) when the peer closed the socket cleanly."""
    fds: list[int] = []
    try:
        if want_fds:
            head, fds, _, _ = socket.recv_fds(sock, _HEADER.size, MAX_FDS)
        else:
            head = sock.recv(_HEADER.size)
        if not head:
            return None, fds
        head += _exactly(sock, _HEADER.size - len(head))
        (size,) = _HEADER.unpack(head)
        if size > MAX_FRAME:
            raise ProtocolError(f"a frame of {size} bytes is over the {MAX_FRAME}-byte limit")
        body = _exactly(sock, size)
        message = json.loads(body.decode("utf-8", "surrogateescape"))
        if not isinstance(message, dict):
            raise ProtocolError("a frame must hold a JSON object")
        return message, fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ProtocolError("the peer closed the socket mid-frame")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def peer_uid(sock: socket.socket) -> int | None:
    """The connected peer's user id, from the kernel (SO_PEERCRED on Linux, getpeereid's LOCAL_PEERCRED on
    macOS); None where neither exists."""
    if hasattr(socket, "SO_PEERCRED"):
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    if sys.platform == "darwin":
        sol_local, local_peercred = 0, 0x001  # <sys/un.h>
        raw = sock.getsockopt(sol_local, local_peercred, struct.calcsize("IIh16I"))
        return struct.unpack_from("II", raw)[1]  # struct xucred: version, uid, ...
    return None


def job_request(message: dict[str, Any]) -> dict[str, Any]:
    """Check a client's "run" frame field by field: anything that is not an oxi command line is refused."""
    checks = {
        "op": lambda v: v == "run",
        "protocol": lambda v: v == PROTOCOL,
        "key": lambda v: isinstance(v, str) and len(v) < 128,
        "argv": lambda v: isinstance(v, list) and len(v) <= MAX_ARGS and all(isinstance(a, str) for a in v),
        "cwd": lambda v: isinstance(v, str) and os.path.isabs(v),
        "env": lambda v: isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items()),
        "umask": lambda v: isinstance(v, int) and 0 <= v <= 0o777,
        "streams": lambda v: isinstance(v, list) and len(v) == 3 and all(_stream_ok(s) for s in v),
        "prog": lambda v: isinstance(v, str) and len(v) < 256,
        "caller": caller.valid,
    }
    if set(message) != set(checks):
        raise ProtocolError(f"unexpected fields: {sorted(set(message) ^ set(checks))}")
    for name, ok in checks.items():
        if not ok(message[name]):
            raise ProtocolError(f"field {name!r} is not valid")
    return message


def _stream_ok(stream: Any) -> bool:
    return (
        isinstance(stream, dict)
        and set(stream) == {"encoding", "errors"}
        and all(isinstance(v, str) and len(v) < 64 for v in stream.values())
    )
