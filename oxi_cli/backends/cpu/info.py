"""What the CPU backend runs on: cores, Numba version and threading layer, SIMD level."""

from __future__ import annotations

import os
import platform
from dataclasses import asdict

from oxi_cli import host
from oxi_cli.backends.cpu.pool import threads_for


def cpu_flags() -> list[str] | None:
    """The kernel's x86 feature flags for this CPU (/proc/cpuinfo); None where there is no such file."""
    flags = host.cpuinfo("flags")
    return None if flags is None else flags.split()


def _simd_level() -> str:
    flags = cpu_flags()
    if flags is None:
        return platform.machine()
    for level in ("avx512f", "avx2", "avx", "sse4_2"):
        if level in flags:
            return level.upper()
    return "NEON" if platform.machine() in ("aarch64", "arm64") else "baseline"


def cpu_info() -> dict[str, object]:
    """A JSON-ready description of the CPU backend (imports numba, so call it lazily)."""
    from oxi_cli import jit, kernel_cache  # jit: the kernel cache's place before numba loads

    where = kernel_cache.location().path
    return {
        "name": "cpu",
        "processor": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "numba_version": jit.numba.__version__,
        "threads": threads_for(None),  # the kernels' pool (serial nogil kernels, one block a task)
        "simd": _simd_level(),
        "cache_dir": None if where is None else str(where),
    }


def describe_devices(problems: list[str]) -> list[dict[str, object]]:
    """`oxi probe`'s view of this backend (the registry's describer): the host, and the rates `auto` weighs it by."""
    from oxi_cli.backends.cost import load_rates

    try:
        found: dict[str, object] = dict(cpu_info())
    except Exception as exc:
        problems.append(f"the CPU backend cannot load: {type(exc).__name__}: {exc}")
        found = {"name": "cpu", "cores": os.cpu_count()}
    rates = load_rates()
    return [{**found, "kind": "cpu", "type": "Numba CPU",
             "rates": {"source": "measured" if rates.measured_at else "defaults", **asdict(rates.host)}}]
