"""Ctrl-C in a batch's threads: an interrupt that lands anywhere in a job thread prints no traceback."""

from __future__ import annotations

import subprocess
import sys

LANDS_AT_THREAD_START = """
import threading, time
from oxi_cli.batch.interrupts import raise_in_thread

class Starting(threading.Thread):
    def _bootstrap_inner(self):  # the interrupt lands before run(), where threading.excepthook never sees it
        self._started.set()
        raise KeyboardInterrupt

raise_in_thread(threading.Thread(target=lambda: None))  # not started: only the command's quiet hooks go in
thread = Starting(daemon=True)
thread.start()
time.sleep(0.5)
"""


def test_an_interrupt_landing_as_a_job_thread_starts_prints_no_traceback():
    done = subprocess.run([sys.executable, "-c", LANDS_AT_THREAD_START], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
