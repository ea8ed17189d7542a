"""The oxi error tree: every expected failure is an OxiError carrying its exit code."""

from __future__ import annotations

import errno
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def caused_by_interrupt(error: BaseException) -> bool:
    """A Ctrl-C, or an error one caused: a KeyboardInterrupt inside a C extension's import (OpenEXR's,
    numpy's) comes out as ImportError("initialization failed") raised from it."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


# The exit status of the work whose every file had ended (batch/runner.py notes it), until the next command:
# a Ctrl-C after that point (while oxi reports, or winds a cluster down) interrupted nothing, so the process
# exits with this status and says nothing of an interruption.
_settled: list[int] = []


def note_settled(code: int | None) -> None:
    """Every file of the running work has ended with `code` (None: new work begins)."""
    _settled[:] = [] if code is None else [code]


def settled_status() -> int | None:
    """The status noted by note_settled, if the current work has ended."""
    return _settled[0] if _settled else None


class OxiError(Exception):
    """A failure the user can act on; printed as one line, no traceback."""

    exit_code = 1
    # What each file of the work this error ended came to (oxi_cli.api's process()); empty otherwise.
    results: Sequence[Any] = ()


class UsageError(OxiError):
    """Bad command-line usage: wrong option values or combinations."""

    exit_code = 2


class InputError(OxiError):
    """An input file that is missing, unreadable or not what its name says."""

    exit_code = 2


class FormatError(InputError):
    """A LUT / CDL file that does not parse; names the file and line."""

    def __init__(self, path: str | Path, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line


class OpError(UsageError):
    """An operation built with invalid parameters."""


class ProcessingError(OxiError):
    """A failure while processing or writing (device lost, disk full...)."""

    exit_code = 1


class GpuFailure(ProcessingError):
    """The device failed while working (out of memory, lost, driver error): `auto` may redo the job on the CPU."""


class BackendUnavailable(OxiError):
    """The requested compute backend cannot be used on this machine."""

    exit_code = 2


class Interrupted(OxiError, KeyboardInterrupt):
    """Ctrl-C (or a caller's cancellation) stopped the work; no partial output was left behind. A KeyboardInterrupt
    too, so code that handles Ctrl-C handles it."""

    exit_code = 130


# OSError numbers that mean the machine failed (disk, memory, descriptors), not the user's input or arguments:
# reading a file hits them through no fault of the file, so they exit 1 rather than 2.
MACHINE_ERRNOS = frozenset(
    {errno.EIO, errno.ENOMEM, errno.ENOSPC, errno.ENFILE, errno.EMFILE, getattr(errno, "EDQUOT", errno.ENOSPC)}
)


def is_machine_failure(error: OSError) -> bool:
    """True when an OSError is the machine's fault (exit 1), False when it is about the path given (exit 2)."""
    return error.errno in MACHINE_ERRNOS


class DamagedFileWarning(UserWarning):
    """A file decoded although the library reading it reported damage: the result may hold wrong pixels."""
