"""The CPU backend's threads: a serial kernel run over blocks of pixels or rows on every core at once."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from oxi_cli import host

_pools: dict[int, ThreadPoolExecutor] = {}
_lock = threading.Lock()


def _afresh_in_child() -> None:
    """A forked child (a service worker) has none of its parent's threads: its pools start afresh, and so does
    the lock, which a parent's thread may have held at the fork."""
    global _lock
    _pools.clear()
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_afresh_in_child)


def threads_for(n: int | None) -> int:
    """A requested thread count clamped to 1 .. this process's cores (all of them when None)."""
    cores = host.cores()
    return cores if n is None else max(1, min(int(n), cores))


def _pool(threads: int) -> ThreadPoolExecutor:
    with _lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = _pools[threads] = ThreadPoolExecutor(threads, thread_name_prefix="oxi-cpu")
        return pool


def run_blocks(work: Callable[[int, int], None], total: int, block: int, threads: int) -> None:
    """work(start, stop) over [0, total) in blocks of `block`, on `threads` threads (the kernels release the
    GIL). Blocks are dealt in turn, so a thread that another process slows holds up at most its last block;
    the first failure is raised here once every block has ended."""
    starts = range(0, total, max(1, block))
    if threads <= 1 or len(starts) <= 1:
        for start in starts:
            work(start, min(start + block, total))
        return
    futures = [_pool(threads).submit(work, start, min(start + block, total)) for start in starts]
    errors = [f.exception() for f in futures]
    failure = next((e for e in errors if e is not None), None)
    if failure is not None:
        raise failure


def split(total: int, threads: int, least: int) -> int:
    """A block size giving each of `threads` threads about four blocks, none under `least` (a pool handoff costs
    a few microseconds, so a block must take much longer than that)."""
    return max(least, -(-total // (4 * max(1, threads))))
