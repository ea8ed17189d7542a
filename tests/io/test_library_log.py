"""Library log lines during oxi's reads: held for the read, never printed raw, whatever the host did to logging."""

from __future__ import annotations

import logging
import threading

import pytest

from oxi_cli.errors import DamagedFileWarning
from oxi_cli.io.library_log import held_library_log, warn_if_damaged


class Seen(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def root_handler():
    seen = Seen()
    logging.getLogger().addHandler(seen)
    yield seen
    logging.getLogger().removeHandler(seen)


def test_a_library_line_during_a_read_is_held_even_after_a_host_resets_propagation(root_handler):
    lib = logging.getLogger("tifffile")
    before = lib.propagate
    lib.propagate = True  # what dictConfig or a pipeline's own set-up may do
    own = Seen()
    lib.addHandler(own)  # and pytest >= 9.2 attaches its capture handler to non-propagating loggers
    try:
        with held_library_log() as held:
            lib.warning("incorrect StripByteCounts count (3 != 7500)")
    finally:
        lib.removeHandler(own)
        lib.propagate = before
    assert held == ["incorrect StripByteCounts count (3 != 7500)"]
    assert root_handler.lines == [] and own.lines == []


def test_outside_oxi_reads_library_lines_pass_as_usual(root_handler):
    logging.getLogger("imagecodecs").warning("PNG warning: IDAT: incorrect data check")
    assert root_handler.lines == ["PNG warning: IDAT: incorrect data check"]


def test_a_line_from_another_read_thread_goes_to_that_read():
    lib = logging.getLogger("imagecodecs")
    inside = threading.Event()
    done = threading.Event()
    other: list[list[str]] = []

    def read() -> None:
        with held_library_log() as held:
            other.append(held)
            inside.set()
            done.wait(5)
            lib.warning("theirs")

    worker = threading.Thread(target=read)
    worker.start()
    inside.wait(5)
    with held_library_log() as mine:
        lib.warning("mine")
        done.set()
        worker.join(5)
    assert mine == ["mine"] and other == [["theirs"]]


def test_a_damaged_file_that_decoded_warns_once_with_the_first_complaint(tmp_path):
    with pytest.warns(DamagedFileWarning, match=r"a\.tif: the file is damaged but was read \(first and 1 more\)"):
        warn_if_damaged(tmp_path / "a.tif", ["first", "second"])
