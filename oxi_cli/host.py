"""This machine as oxi sees it: the CPU /proc/cpuinfo describes (read once a process) and the cores it may use."""

from __future__ import annotations

import functools
import os

CPUINFO = "/proc/cpuinfo"
MODEL = "model name"
FLAGS = ("flags", "Features")  # x86's name, ARM's


def cores() -> int:
    """The cores this process may run on (its affinity mask, which taskset and cgroup cpusets narrow), not the
    machine's; asked each time, as the mask may change while the process runs."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # macOS, Windows: no mask to ask


def cpuinfo(*names: str) -> str | None:
    """The first of the fields `names` that /proc/cpuinfo gives a value, in the file's order, stripped: "" where
    none has one, None where there is no such file (not Linux)."""
    fields = _cpuinfo()
    if fields is None:
        return None
    return next((value for name, value in fields.items() if name in names), "")


@functools.cache
def _cpuinfo() -> dict[str, str] | None:
    """Each field's first value that is not empty. Reading stops once the model and the flags are in: the file
    repeats them for every core, and the first core's are enough."""
    fields: dict[str, str] = {}
    try:
        with open(CPUINFO, encoding="utf-8", errors="replace") as f:
            for line in f:
                name, _, value = line.partition(":")
                if value.strip():
                    fields.setdefault(name.strip(), value.strip())
                if MODEL in fields and any(flags in fields for flags in FLAGS):
                    break
    except OSError:
        return None
    return fields
