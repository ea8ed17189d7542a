"""Standard streams that were closed when the command started (`oxi info a.png >&-`): answered in one line, as a
C program's writes would fail, and their descriptors held so that no file the job opens takes their place."""

from __future__ import annotations

import io
import os
import sys

from oxi_cli.errors import UsageError

_STREAMS = ((0, "stdin"), (1, "stdout"), (2, "stderr"))
_WORDS = ("input", "output", "error")


class StreamClosed(UsageError):
    """Output was written to, or input read from, a standard stream the caller closed."""


class ClosedStream(io.TextIOBase):
    """Stands in for a standard stream whose descriptor was closed: writing output or reading input is the
    caller's error (exit 2, one line); what would go to stderr is lost, as it is for any program."""

    def __init__(self, fd: int, name: str) -> None:
        self._fd, self._name = fd, name

    @property
    def encoding(self) -> str:
        return "utf-8"

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def readable(self) -> bool:
        return self._fd == 0

    def writable(self) -> bool:
        return self._fd != 0

    def write(self, text: str) -> int:
        if self._fd == 2:
            return len(text)
        raise self._error()

    def read(self, size: int | None = -1) -> str:
        raise self._error()

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        raise self._error()

    def _error(self) -> StreamClosed:
        how = "<&-" if self._fd == 0 else ">&-"
        return StreamClosed(f"standard {_WORDS[self._fd]} is closed ({how}); give it a file or /dev/null")


def guard_closed_streams() -> None:
    """Where Python found a standard descriptor closed at start (its sys stream is None): hold the descriptor
    with /dev/null opened the other way (a stray write or read of it fails, EBADF) and put a ClosedStream in
    the sys stream's place."""
    for fd, name in _STREAMS:
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            held = os.open(os.devnull, os.O_WRONLY if fd == 0 else os.O_RDONLY)
            if held != fd:
                os.dup2(held, fd, inheritable=False)
                os.close(held)
        setattr(sys, name, ClosedStream(fd, name))
