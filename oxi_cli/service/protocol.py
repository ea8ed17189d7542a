"""The service's wire format, for both ends: length-prefixed JSON frames on a Unix socket, descriptors beside them.

No pickle and no code crosses the socket: a frame is a JSON object of bounded size and depth, checked field by
field. Every call of the `oxi` command imports this module before it knows where its job runs, so it imports only
the interpreter's own C modules: _socket, not socket.py (its enum and selectors imports cost the client more than
the rest of its work), and json only for frames other than the service's usual replies.
"""

from __future__ import annotations

import _socket
import os
import sys

from oxi_cli.service import caller  # imports only os, as this module does

PROTOCOL = 2  # the request's "protocol": a client and a service of one build always agree on it
MAX_FRAME = 1 << 20  # argv and environment of any real command line fit many times over
MAX_DEPTH = 8  # a job as the dispatcher hands it on nests 4 deep: {"job": {"streams": [{"encoding": ...}]}}
MAX_FDS = 4  # a job's connection and the client's three standard streams
MAX_ARGS = 65536
_HEADER = 4  # bytes of a frame's big-endian length
_FD_BYTES = 4  # a descriptor in SCM_RIGHTS: a C int
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class ProtocolError(Exception):
    """A peer sent something that is not an oxi frame (or vanished mid-frame)."""


def connect(path: str, timeout: float | None = None) -> _socket.socket:
    """A connection to the service listening on `path`. OSError when none listens there: ECONNREFUSED where the
    socket file is left with nobody behind it (a crash's leftover)."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock


def encode(message: dict) -> bytes:
    """A frame: its length, then the message as JSON (non-ASCII as UTF-8, undecodable bytes as they came)."""
    data = dumps(message).encode("utf-8", "surrogateescape")
    if len(data) > MAX_FRAME:
        raise ProtocolError(f"a frame of {len(data)} bytes is over the {MAX_FRAME}-byte limit")
    return len(data).to_bytes(_HEADER, "big") + data


def send(sock: _socket.socket, message: dict, fds: tuple[int, ...] | list[int] = ()) -> None:
    """One frame, with `fds` passed beside its first bytes."""
    frame = encode(message)
    if fds:
        # C ints in native order, as array("i", fds) would give without importing array
        rights = b"".join(fd.to_bytes(_FD_BYTES, sys.byteorder, signed=True) for fd in fds)
        frame = frame[sock.sendmsg([frame], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)]):]
    while frame:
        frame = frame[sock.send(frame):]


class Reader:
    """Reads one frame as its bytes come, never past its end (the bytes after it are the next reader's: a job's
    connection goes on to the worker); descriptors that came with it are collected. On a non-blocking socket
    `read` takes what is there; on a blocking one it waits for the whole frame."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.data = b""
        self.fds: list[int] = []
        self.size: int | None = None  # the body's length, once the header is in

    def read(self) -> dict | None:
        """The frame's object once it is whole, else None (a non-blocking socket had no more yet). Raises EOFError
        when the peer closed before a first byte, ProtocolError on anything else that is not a frame."""
        try:
            while True:
                want = _HEADER - len(self.data) if self.size is None else self.size + _HEADER - len(self.data)
                if want == 0:
                    return decode(self.data[_HEADER:])
                chunk = self._chunk(want)
                if not chunk:
                    if self.data:
                        raise ProtocolError("the peer closed the socket mid-frame")
                    raise EOFError
                self.data += chunk
                if self.size is None and len(self.data) == _HEADER:
                    self.size = int.from_bytes(self.data, "big")
                    if self.size > MAX_FRAME:
                        raise ProtocolError(f"a frame of {self.size} bytes is over the {MAX_FRAME}-byte limit")
        except BlockingIOError:
            return None
        except BaseException:
            self.close_fds()
            raise

    def _chunk(self, want: int) -> bytes:
        data, ancillary, flags, _ = self.sock.recvmsg(want, _socket.CMSG_SPACE(MAX_FDS * _FD_BYTES))
        for level, kind, payload in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                whole = len(payload) - len(payload) % _FD_BYTES
                self.fds += [int.from_bytes(payload[i:i + _FD_BYTES], sys.byteorder, signed=True)
                             for i in range(0, whole, _FD_BYTES)]
        if flags & getattr(_socket, "MSG_CTRUNC", 0) or len(self.fds) > MAX_FDS:
            raise ProtocolError(f"more than {MAX_FDS} descriptors sent with a frame")
        return data

    def close_fds(self) -> None:
        """Close the descriptors that came with the frame (what its reader did not take on)."""
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


def recv(sock: _socket.socket) -> dict | None:
    """One frame's object, waiting for it; None when the peer closed the socket before it. Descriptors sent with
    it are closed: only the dispatcher and workers take them on, through a Reader."""
    reader = Reader(sock)
    try:
        message = reader.read()
    except EOFError:
        return None
    reader.close_fds()
    if message is None:  # a non-blocking socket: callers that want that use a Reader
        raise ProtocolError("no whole frame to read")
    return message


def decode(body: bytes) -> dict:
    """A frame's object. The service's usual replies to a client ({"exit": N}, {"started": PID}, {"wrote": N}) are
    read without json; anything else is checked for depth first (json recurses once per level)."""
    if body[:2] == b'{"' and body[-1:] == b"}" and b'":' in body:
        name, _, value = body[2:-1].partition(b'":')
        if name.isalpha() and value.isdigit():
            return {name.decode("ascii"): int(value)}
    if _depth(body) > MAX_DEPTH:
        raise ProtocolError(f"a frame nested deeper than {MAX_DEPTH} levels")
    import json

    try:
        found = json.loads(body.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError) as e:
        raise ProtocolError(f"not a JSON frame: {e}") from None
    if not isinstance(found, dict):
        raise ProtocolError("a frame must hold a JSON object")
    return found


def _depth(body: bytes) -> int:
    """How deep the frame's arrays and objects nest (brackets inside strings not counted), up to MAX_DEPTH + 1."""
    import re

    brackets = re.sub(rb'"(?:[^"\\]|\\.)*"', b"", body, flags=re.DOTALL).translate(None, _NOT_BRACKETS)
    depth = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        if depth > MAX_DEPTH:
            break
    return depth


_ESCAPES = {i: f"\\u{i:04x}" for i in range(32)} | {ord('"'): '\\"', ord("\\"): "\\\\"}


def dumps(value: object) -> str:
    """JSON for the str, int, float, bool, None, list and dict values frames hold (json.dumps without its imports)."""
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPES) + '"'
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float) and value - value == 0:  # finite: JSON has no NaN or infinity
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(dumps(str(k)) + ":" + dumps(v) for k, v in value.items()) + "}"
    raise TypeError(f"cannot send {type(value).__name__} in a frame")


def peer_uid(sock: _socket.socket) -> int | None:
    """The connected peer's user id, from the kernel (SO_PEERCRED on Linux, getpeereid's LOCAL_PEERCRED on
    macOS); None where neither exists."""
    if hasattr(_socket, "SO_PEERCRED"):
        creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # struct ucred: pid, uid, gid
        return int.from_bytes(creds[4:8], sys.byteorder)
    if sys.platform == "darwin":
        sol_local, local_peercred = 0, 0x001  # <sys/un.h>
        raw = sock.getsockopt(sol_local, local_peercred, 76)  # struct xucred: version, uid, ngroups, groups[16]
        return int.from_bytes(raw[4:8], sys.byteorder)
    return None


def job_request(message: dict) -> dict:
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


def _stream_ok(stream: object) -> bool:
    return (
        isinstance(stream, dict)
        and set(stream) == {"encoding", "errors"}
        and all(isinstance(v, str) and len(v) < 64 for v in stream.values())
    )
