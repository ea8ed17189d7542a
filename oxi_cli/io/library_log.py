"""What the image libraries log while oxi reads a file: held for that read and said once in oxi's words."""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from oxi_cli.errors import DamagedFileWarning

# Loggers of the libraries oxi decodes through (tifffile's own, imagecodecs' for libpng's "PNG warning: ...").
LIBRARY_LOGGERS = ("tifffile", "imagecodecs")


class _Held(logging.Filter):
    """A filter on each library logger: during an oxi read its records are kept for that read and go no further
    (no handler, not the root's, not Python's last-resort print); outside oxi's reads they pass as usual.

    A filter, not `propagate = False`: a host's logging set-up (dask's, pytest's, a pipeline's dictConfig) may
    reset propagation or attach handlers to the library loggers, but a logger's filters run before all of them.
    """

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.reads: dict[int, list[str]] = {}  # thread id -> what was logged during that thread's read

    def filter(self, record: logging.LogRecord) -> bool:
        with self.lock:
            if not self.reads:
                return True
            held = self.reads.get(record.thread)
            if held is None and len(self.reads) == 1:  # a library's own decoding thread: the one read running
                held = next(iter(self.reads.values()))
            if held is not None and record.levelno >= logging.WARNING:
                held.append(record.getMessage())
        return False


_HELD = _Held()
_installed = False


def _install() -> None:
    global _installed
    with _HELD.lock:
        if not _installed:
            for name in LIBRARY_LOGGERS:
                logging.getLogger(name).addFilter(_HELD)
            _installed = True


@contextmanager
def held_library_log() -> Iterator[list[str]]:
    """Collect the library lines logged while the block reads a file on this thread (and its decoding threads)."""
    _install()
    held: list[str] = []
    me = threading.get_ident()
    with _HELD.lock:
        outer = _HELD.reads.get(me)
        _HELD.reads[me] = held
    try:
        yield held
    finally:
        with _HELD.lock:
            if outer is None:
                del _HELD.reads[me]
            else:
                _HELD.reads[me] = outer


def warn_if_damaged(path: Path, held: list[str]) -> None:
    """A file that decoded although its library complained: one warning naming the file and the first complaint."""
    if held:
        first = " ".join(held[0].split())
        more = f" and {len(held) - 1} more" if len(held) > 1 else ""
        warnings.warn(
            f"{path}: the file is damaged but was read ({first}{more}); check the result or re-export it",
            DamagedFileWarning,
            stacklevel=2,
        )
