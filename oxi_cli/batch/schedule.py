"""Admission control for `--jobs N`: start a file only while every running file's memory estimate fits."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Footprint:
    """Estimated peak bytes one file needs in host memory (`ram`) and on the GPU (`vram`)."""

    ram: int
    vram: int


def memory_budget(given: int | None) -> int:
    """Bytes: --memory-budget's (BatchOptions.check read it), else env OXI_MEMORY_BUDGET's, else the planner's
    default (half of the memory available now): one budget for the batch and for each file's plan."""
    from oxi_cli.memory import default_ram_budget, parse_bytes

    if given is not None:
        return given
    env = os.environ.get("OXI_MEMORY_BUDGET")
    if env:
        return parse_bytes(env, "OXI_MEMORY_BUDGET")
    return default_ram_budget()


class Scheduler:
    """Which file may start now. Files start in order (no overtaking, so output order is predictable).

    A file starts when fewer than `jobs` run and the running files' estimates plus its own fit `ram_budget`
    and, on a GPU, `vram_budget`. A file that alone exceeds a budget runs only when nothing else does, so a
    batch never stalls; that one file is then as large as it would be without --jobs.
    """

    def __init__(self, jobs: int, ram_budget: int, vram_budget: int | None = None) -> None:
        if jobs < 1:  # a caller's mistake: --jobs' range is checked with the other options (BatchOptions.check)
            raise ValueError(f"a scheduler needs at least one slot, got {jobs}")
        self.jobs = jobs
        self.ram_budget = ram_budget
        self.vram_budget = vram_budget
        self.running: list[Footprint] = []

    @property
    def ram_in_use(self) -> int:
        return sum(f.ram for f in self.running)

    @property
    def vram_in_use(self) -> int:
        return sum(f.vram for f in self.running)

    def admits(self, fp: Footprint) -> bool:
        if not self.running:
            return True
        if len(self.running) >= self.jobs or self.ram_in_use + fp.ram > self.ram_budget:
            return False
        return self.vram_budget is None or self.vram_in_use + fp.vram <= self.vram_budget

    def start(self, fp: Footprint) -> None:
        self.running.append(fp)

    def finish(self, fp: Footprint) -> None:
        self.running.remove(fp)


class SharedBudget(Protocol):
    """A memory budget shared with other processes (the service's, across its workers)."""

    def acquire(self, nbytes: int, cancelled: Callable[[], bool]) -> None: ...

    def release(self, nbytes: int) -> None: ...


_shared: list[SharedBudget] = []


def share_budget(budget: SharedBudget | None) -> None:
    """Make every file this process runs wait for `budget` too (None: this process's own budget alone)."""
    _shared[:] = [budget] if budget is not None else []


@contextlib.contextmanager
def admitted(nbytes: int, cancelled: Callable[[], bool]) -> Iterator[None]:
    """Hold `nbytes` of the shared budget while the block runs (at once where none is shared); raises
    KeyboardInterrupt if `cancelled` while waiting."""
    if not _shared:
        yield
        return
    budget = _shared[0]
    budget.acquire(nbytes, cancelled)
    try:
        yield
    finally:
        budget.release(nbytes)
