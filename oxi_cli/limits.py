"""Ranges a run setting must respect however it is given (flag, recipe, environment)."""

from __future__ import annotations

import os

# More threads than this only thrash (and OpenEXR's pool fails to start some 10000 threads): 4 per core.
THREADS_PER_CORE = 4
MAX_JOBS = 256


def max_threads() -> int:
    """The machine's cores, not the process's: a recipe's `threads = 16` stays valid in a farm slot whose cpuset
    allows 2 (the kernels' pool takes only the cores it may use: backends/cpu/pool.threads_for)."""
    return THREADS_PER_CORE * (os.cpu_count() or 1)
