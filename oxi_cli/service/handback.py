"""A job that must run in its caller's own process, found out inside a service worker: handed back untouched."""

from __future__ import annotations

_WORKER: list[bool] = []  # set once in a service worker's process


class RunInOwnProcess(BaseException):
    """Raised by a served command before it has done anything; the worker tells the client to run it itself.
    A BaseException, so that a command's own failure handling passes it on (as it does KeyboardInterrupt)."""


def in_worker() -> None:
    """This process is a service worker (service/worker.py says so when it starts)."""
    _WORKER[:] = [True]


def own_process(what: str) -> None:
    """`what` runs in the caller's process: in a service worker, hand the job back to the client."""
    if _WORKER:
        raise RunInOwnProcess(f"{what} runs in its own process")
