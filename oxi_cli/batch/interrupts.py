"""Ctrl-C in a batch: interrupting the file threads, and holding a SIGINT back while a report comes out whole."""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading
from typing import Any


def raise_in_thread(thread: threading.Thread, quiet: bool = True) -> None:
    """Interrupt a job thread. The KeyboardInterrupt can land before the job's own handler is set up; the
    batch reports the interruption itself, so a thread ending of it must print no traceback (`quiet`: the
    command's process-wide threading.excepthook says so; a Python caller's hook is left as it is)."""
    if quiet and threading.excepthook is not _quiet_on_interrupt:
        threading.excepthook = _quiet_on_interrupt
    if quiet and sys.unraisablehook is not _quiet_unraisable:
        sys.unraisablehook = _quiet_unraisable
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt))


_default_excepthook = threading.excepthook


def _quiet_on_interrupt(args: threading.ExceptHookArgs) -> None:
    if not issubclass(args.exc_type, KeyboardInterrupt):
        _default_excepthook(args)


_default_unraisablehook = sys.unraisablehook


def _quiet_unraisable(unraisable: Any) -> None:
    """An interrupt that lands in a thread just started, before its run() (in Thread._bootstrap), reaches Python
    as an unraisable exception, not through threading.excepthook: the batch reports the interruption itself."""
    if not issubclass(unraisable.exc_type, KeyboardInterrupt):
        _default_unraisablehook(unraisable)


# The SIGTERMs and SIGHUPs interrupt_as_ctrl_c took, for the command to end by (cli/failures.py).
SIGNALLED: list[int] = []


def interrupt_as_ctrl_c(signum: int, frame: object) -> None:
    """The command's handler for SIGTERM and SIGHUP: interrupt it as a Ctrl-C would (files abandoned, temporaries
    removed), remembering the signal to end by."""
    SIGNALLED.append(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_deferred(drop: bool = False) -> Any:
    """On the main thread, hold a SIGINT back until the block is done, then raise it as KeyboardInterrupt
    (`drop`: forget it, for work that nothing is left to interrupt); SIGTERM and SIGHUP too where the command
    takes them as Ctrl-C (interrupt_as_ctrl_c; a Python caller's own handlers are left alone)."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and (sig == signal.SIGINT or signal.getsignal(sig) is interrupt_as_ctrl_c):
            held[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, previous in held.items():
            signal.signal(sig, previous)
    if caught and not drop:
        handler = held[caught[0]]
        if callable(handler):
            handler(caught[0], None)
        raise KeyboardInterrupt
