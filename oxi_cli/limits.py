"""Ranges a run setting must respect however it is given (flag, recipe, environment)."""

from __future__ import annotations

from oxi_cli.host import cores

# More threads than this only thrash (and OpenEXR's pool fails to start some 10000 threads): 4 per core.
THREADS_PER_CORE = 4
MAX_JOBS = 256


def max_threads() -> int:
    return THREADS_PER_CORE * cores()
