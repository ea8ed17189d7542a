"""--jobs admits files against the memory budget: never more than fits, never stalled by one large file."""

from __future__ import annotations

import itertools

import pytest

from oxi_cli.batch.schedule import Footprint, Scheduler
from oxi_cli.errors import UsageError
from oxi_cli.memory import parse_bytes


def simulate(scheduler: Scheduler, sizes: list[int], finish_order: str = "fifo") -> int:
    """Run files through the scheduler as the batch loop does; return the most ever running at once."""
    pending = [Footprint(s, s) for s in sizes]
    running: list[Footprint] = []
    peak = 0
    while pending or running:
        while pending and scheduler.admits(pending[0]):
            fp = pending.pop(0)
            scheduler.start(fp)
            running.append(fp)
            assert len(running) == 1 or scheduler.ram_in_use <= scheduler.ram_budget
            peak = max(peak, len(running))
        done = running.pop(0 if finish_order == "fifo" else -1)
        scheduler.finish(done)
    return peak


@pytest.mark.parametrize("order", ["fifo", "lifo"])
def test_budget_for_one_file_runs_one_at_a_time(order: str):
    assert simulate(Scheduler(jobs=8, ram_budget=150), [100] * 6, order) == 1


def test_budget_for_three_files_runs_three_of_eight_jobs():
    assert simulate(Scheduler(jobs=8, ram_budget=300), [100] * 6) == 3


def test_jobs_cap_holds_when_memory_is_plentiful():
    assert simulate(Scheduler(jobs=2, ram_budget=10**12), [100] * 6) == 2


def test_a_file_larger_than_the_budget_still_runs_alone():
    s = Scheduler(jobs=4, ram_budget=100)
    big = Footprint(500, 0)
    assert s.admits(big)
    s.start(big)
    assert not s.admits(Footprint(1, 0))


def test_gpu_memory_is_a_second_budget():
    s = Scheduler(jobs=4, ram_budget=10**12, vram_budget=150)
    s.start(Footprint(10, 100))
    assert not s.admits(Footprint(10, 100))
    assert s.admits(Footprint(10, 50))


def test_budget_never_exceeded_over_mixed_sizes():
    sizes = [30, 70, 10, 90, 50, 20, 60, 40]
    for jobs, budget in itertools.product((1, 2, 3, 8), (90, 120, 200)):
        assert simulate(Scheduler(jobs=jobs, ram_budget=budget), sizes) <= jobs


@pytest.mark.parametrize(("text", "value"), [("8G", 8 << 30), ("512M", 512 << 20), ("1.5GiB", 3 << 29),
                                             ("300000", 300000), ("64k", 64 << 10)])
def test_memory_sizes(text: str, value: int):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["", "lots", "-1G", "0"])
def test_bad_memory_sizes(text: str):
    with pytest.raises(UsageError, match="--memory-budget"):
        parse_bytes(text, "--memory-budget")
