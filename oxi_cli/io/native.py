"""What a C library prints while oxi calls it, held back per call so a failure reaches the user as one line."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
import threading
from collections.abc import Iterator
from typing import Any

# OpenEXR's C core reports errors with fprintf(stderr, "<file>: (EXR_ERR_...) text") from its default
# handler (neither its C++ library nor the Python binding installs another); "<ERROR>: " when it has no file.
_LIBRARY_LINE = re.compile(r"\(EXR_ERR_[A-Z0-9_]+\) |^<ERROR>: ")


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError, AttributeError):
        return False


class _CStderr:
    """C's `stderr` stream, pointed at a temporary file while any held call runs.

    The pointer is a plain variable that glibc and macOS let a program set (glibc's manual says so), unlike
    file descriptor 2: Python's own writes to sys.stderr (any thread's) go to the descriptor and are never
    touched. Elsewhere (musl makes it const) nothing is held back and a library's line may show.
    """

    def __init__(self) -> None:
        self._var: Any = None
        self._saved: int | None = None
        name = "__stderrp" if sys.platform == "darwin" else "stderr" if _glibc() else None
        if name is None:
            return
        try:
            libc = ctypes.CDLL(None)
            var = ctypes.c_void_p.in_dll(libc, name)
            libc.tmpfile.restype = ctypes.c_void_p
            libc.fflush.argtypes = [ctypes.c_void_p]
            libc.fileno.argtypes = [ctypes.c_void_p]
            # One sink for the whole process, never closed: a thread that picked up the pointer just before it
            # was restored may still write through it.
            sink = libc.tmpfile()
        except (OSError, ValueError, AttributeError):
            return
        if sink:
            self._libc, self._var, self._sink, self._fd = libc, var, sink, libc.fileno(sink)

    @property
    def works(self) -> bool:
        return self._var is not None

    def redirect(self) -> None:
        self._libc.fflush(self._var.value)
        self._saved = self._var.value
        self._var.value = self._sink

    def restore(self) -> None:
        self._var.value = self._saved

    def end(self) -> int:
        """Bytes written to the sink so far (its buffer flushed)."""
        self._libc.fflush(self._sink)
        return os.fstat(self._fd).st_size

    def read(self, start: int, stop: int) -> bytes:
        return os.pread(self._fd, stop - start, start) if stop > start else b""


class _HeldStdout:
    """sys.stdout while held calls run: the calling threads' writes are kept, every other thread's pass through.

    The OpenEXR binding prints its warnings with Python's print(), from the thread that called it.
    """

    def __init__(self, real: Any) -> None:
        self.real = real
        self.held: dict[int, list[str]] = {}

    def write(self, text: str) -> int:
        held = self.held.get(threading.get_ident())
        if held is None:
            return self._forward("write")(text)
        held.append(text)
        return len(text)

    def flush(self) -> None:
        self._forward("flush")()

    def __getattr__(self, name: str) -> Any:
        return self._forward(name)

    def _forward(self, name: str) -> Any:
        """The replaced stream's attribute, for another thread. That stream may itself go through sys.stdout,
        which is this proxy (rich's FileProxy prints through a console bound to sys.stdout, and looks up what
        it lacks on the stream it replaced): the two then called each other until RecursionError. A call
        that comes back is answered by the interpreter's own stdout instead."""
        if getattr(_FORWARDING, "active", False) or self.real is None:
            return getattr(sys.__stdout__, name)
        with _forwarding():
            attr = getattr(self.real, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with _forwarding():
                return attr(*args, **kwargs)

        return call


_FORWARDING = threading.local()


@contextlib.contextmanager
def _forwarding() -> Iterator[None]:
    """Marks this thread as inside the replaced stream, so that a call coming back to the proxy goes elsewhere."""
    _FORWARDING.active = True
    try:
        yield
    finally:
        _FORWARDING.active = False


class NativeOutput:
    """The first held call redirects C's stderr, the last one out restores it; each call gets its own lines.

    Lines that are not the library's (another C library writing meanwhile) are passed on to file
    descriptor 2 when the last call ends, so nothing any thread prints is lost.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._c = _CStderr()
        self._stdout: _HeldStdout | None = None
        self._forwarded = 0  # sink bytes already passed on (or kept as library lines)

    def enter(self) -> int:
        with self._lock:
            if self._users == 0:
                if self._c.works:
                    self._c.redirect()
                self._stdout = _install_held_stdout()
            self._users += 1
            assert self._stdout is not None
            self._stdout.held[threading.get_ident()] = []
            return self._c.end() if self._c.works else 0

    def leave(self, start: int) -> list[str]:
        with self._lock:
            end = self._c.end() if self._c.works else 0
            err = self._c.read(start, end) if self._c.works else b""
            assert self._stdout is not None
            out = "".join(self._stdout.held.pop(threading.get_ident(), []))
            self._users -= 1
            if self._users == 0:
                _uninstall_held_stdout()
                self._stdout = None
                if self._c.works:
                    self._c.restore()
                    self._pass_on_foreign_lines()
        return err.decode(errors="replace").splitlines() + out.splitlines()

    def _pass_on_foreign_lines(self) -> None:
        end = self._c.end()
        data = self._c.read(self._forwarded, end)
        complete = data.rfind(b"\n") + 1  # a line still being written goes out next time
        self._forwarded += complete
        foreign = [line for line in data[:complete].splitlines(keepends=True) if not _is_library_line(line)]
        if foreign:
            with contextlib.suppress(OSError):
                os.write(2, b"".join(foreign))


# One proxy for the whole process, put in place while held calls run and taken out after, but never freed:
# print() holds sys.stdout as a borrowed reference, so a proxy freed while another thread printed through it
# crashed (a segfault in tests/io/test_exr_header.py, 10 of 12 runs). Outside held calls sys.stdout is the
# caller's own, so nothing else ever saves or wraps the proxy.
_HELD_STDOUT = _HeldStdout(None)


def _install_held_stdout() -> _HeldStdout:
    if sys.stdout is not _HELD_STDOUT:
        _HELD_STDOUT.real = sys.stdout
        sys.stdout = _HELD_STDOUT
    return _HELD_STDOUT


def _uninstall_held_stdout() -> None:
    if sys.stdout is _HELD_STDOUT and _HELD_STDOUT.real is not None:
        sys.stdout = _HELD_STDOUT.real


def _is_library_line(line: bytes) -> bool:
    return _LIBRARY_LINE.search(line.decode(errors="replace")) is not None


_NATIVE_OUTPUT = NativeOutput()


@contextlib.contextmanager
def native_messages() -> Iterator[list[str]]:
    """Run a library call with its printing held back; the list fills with its lines on exit."""
    lines: list[str] = []
    start = _NATIVE_OUTPUT.enter()
    try:
        yield lines
    finally:
        lines.extend(_NATIVE_OUTPUT.leave(start))
