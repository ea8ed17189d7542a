"""User-named files oxi reads (LUTs, CDLs, recipes): regular files only, bounded in size, never blocking.

Below io, formats and recipe, which all read such files."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

from oxi_cli.errors import InputError, OxiError, ProcessingError, is_machine_failure

# Text LUTs: a 256³ .cube (the largest size oxi reads) is about 0.4-0.6 GB of text.
MAX_LUT_BYTES = 1 << 30
# Real CDL files are a few KB (a big .ccc a few MB); recipes are smaller still.
MAX_CDL_BYTES = 32 << 20
MAX_RECIPE_BYTES = 4 << 20
TEXT_PROBE_BYTES = 64 << 10
# Bytes no text file holds: NUL and the C0 controls other than tab, newline, vertical tab, form feed, CR.
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_mode(mode: int) -> str:
    """'a FIFO (named pipe)', 'a character device'...: what a non-regular file is, for messages."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def _access_error(path: Path, kind: str, e: OSError) -> OxiError:
    if is_machine_failure(e):
        return ProcessingError(f"cannot read {kind} file {path}: {e.strerror or e}; the disk or the machine failed")
    if e.errno == errno.ENOENT:
        return InputError(f"{kind} file not found: {path}")
    if e.errno == errno.ELOOP:
        return InputError(f"{kind} path {path} is a symbolic link loop; point it at a real file")
    if e.errno == errno.EACCES:
        return InputError(f"{kind} file {path}: permission denied; check the file's permissions")
    return InputError(f"cannot read {kind} file {path}: {e.strerror or e}")


def regular_file_stat(path: str | Path, kind: str) -> os.stat_result:
    """stat() of `path` (symlinks followed), refusing anything but a regular file with one InputError line.

    Nothing is opened: opening a device can have side effects and opening a FIFO blocks until a writer comes.
    """
    path = Path(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise _access_error(path, kind, e) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{kind} path is a folder, not a file: {path}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{kind} path {path} is {describe_mode(st.st_mode)}, not a regular file; give a file")
    return st


def open_side_file(path: str | Path, kind: str, max_bytes: int) -> BinaryIO:
    """Open a user-named file for reading: a regular file (symlinks followed) of at most `max_bytes`.

    `kind` names the file in messages ("LUT", "CDL", "recipe"). The checks run before anything is read,
    and again on the opened descriptor, so a path swapped for a FIFO in between cannot block either.
    """
    path = Path(path)
    before = regular_file_stat(path, kind)
    _check_size(path, kind, before.st_size, max_bytes)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise _access_error(path, kind, e) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            raise InputError(f"{kind} path {path} changed while being opened; give a file that stays put")
        _check_size(path, kind, st.st_size, max_bytes)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_side_file(path: str | Path, kind: str, max_bytes: int, *, text: bool = False) -> bytes:
    """The whole content of a user-named file, through open_side_file()'s checks; growing past the cap fails too.

    With `text`, a file whose first 64 KiB are not text is refused before the rest is read: a video or an
    archive passed by mistake can be gigabytes, and its bytes must not end up quoted in an error.
    """
    path = Path(path)
    with open_side_file(path, kind, max_bytes) as f:
        try:
            head = f.read(TEXT_PROBE_BYTES)
            if text and is_binary(head):
                raise InputError(f"{path}: not a text {kind} file (it holds binary data); check the path")
            data = _read_rest(f, head, os.fstat(f.fileno()).st_size, max_bytes)
        except OSError as e:
            raise _access_error(path, kind, e) from None
    _check_size(path, kind, len(data), max_bytes)
    return data


def _read_rest(f: BinaryIO, head: bytes, size: int, max_bytes: int) -> bytes:
    """Up to max_bytes + 1 bytes in all; read(n) allocates n bytes up front, so ask for what the file holds."""
    chunks, total = [head], len(head)
    want = max(size - total, 0) + 1
    while total <= max_bytes and (chunk := f.read(min(want, max_bytes + 1 - total))):
        chunks.append(chunk)
        total += len(chunk)
        want = 1 << 20  # the file grew after fstat: go on in steps
    return b"".join(chunks)


def is_binary(head: bytes) -> bool:
    """True when the first bytes of a file are not text: a NUL, or more than 1 % control characters."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with a byte-order mark (XML may be)
        return False
    return b"\0" in head or len(_CONTROL.findall(head)) * 100 > len(head)


def too_big(path: Path, kind: str, size: int, max_bytes: int) -> InputError:
    """The error for a file over its cap."""
    return InputError(
        f"{kind} file {path} is {_size(size)}; {kind} files over {_size(max_bytes)} are refused (is it the right file?)"
    )


def _check_size(path: Path, kind: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise too_big(path, kind, size, max_bytes)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} bytes"
