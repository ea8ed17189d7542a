"""Work a job leaves for the end of its process, done as well by the exits that skip Python's own: the command's
fast exit and a service worker's end of a job both leave by os._exit, which runs no atexit handler."""

from __future__ import annotations

import atexit
import contextlib
from collections.abc import Callable

_WORK: list[Callable[[], None]] = []


def on_leave(work: Callable[[], None]) -> None:
    """Run `work` when this process or its job ends (once per end, however often it is asked for)."""
    if work in _WORK:
        return
    if not _WORK:
        atexit.register(run)
    _WORK.append(work)


def run() -> None:
    """Do the work left so far; called at exit, and by oxi's own exits before os._exit."""
    for work in list(_WORK):
        with contextlib.suppress(Exception):  # what is left undone must not change how the job ended
            work()
