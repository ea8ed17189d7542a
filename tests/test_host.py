"""/proc/cpuinfo is read in one place, once a process, for the kernel cache's key, the rates cache's host and the
CPU backend's flags; the cores a process may use are counted in one place, for every pool sized by them."""

from __future__ import annotations

import hashlib
import os
import platform
from pathlib import Path

import pytest

from oxi_cli import host, kernel_cache
from oxi_cli.backends import rates_file
from oxi_cli.backends.cost import Rates, estimate
from oxi_cli.backends.cpu.info import cpu_flags
from oxi_cli.backends.cpu.pool import threads_for
from oxi_cli.limits import THREADS_PER_CORE, max_threads
from oxi_cli.ops import Blur

X86 = ("processor\t: 0\nmodel\t\t: 85\nmodel name\t: Some CPU @ 2.0GHz\nflags\t\t: sse2 avx2 f16c\n\n"
       "processor\t: 1\nmodel name\t: Another CPU\nflags\t\t: sse2\n")
# A Raspberry Pi: ARM's "Features", no "model name", the board's "Model" after every core's block.
ARM = "processor\t: 0\nFeatures\t: fp asimd\n\nprocessor\t: 1\nFeatures\t: fp asimd\n\nModel\t\t: Raspberry Pi 4\n"


@pytest.fixture
def cpuinfo(tmp_path: Path, monkeypatch):
    """Point host at a /proc/cpuinfo of the test's own; the process's reading is forgotten before and after."""
    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)  # the kernel cache's key would take Numba's CPU instead
    monkeypatch.delenv("NUMBA_CPU_FEATURES", raising=False)

    def use(text: str | None) -> Path:
        path = tmp_path / "cpuinfo"
        if text is not None:
            path.write_text(text)
        monkeypatch.setattr(host, "CPUINFO", str(path))
        host._cpuinfo.cache_clear()
        return path

    yield use
    host._cpuinfo.cache_clear()


def _digest(flags: str) -> str:
    return hashlib.sha1(flags.encode()).hexdigest()[:12]


def test_every_reader_takes_the_first_cores_model_and_flags(cpuinfo):
    cpuinfo(X86)
    assert rates_file.cpu_model() == "Some CPU @ 2.0GHz"
    assert cpu_flags() == ["sse2", "avx2", "f16c"]
    assert kernel_cache._cpu() == f"{platform.machine()} Some CPU @ 2.0GHz {_digest('avx2 f16c sse2')}"


def test_the_file_is_read_once_a_process(cpuinfo):
    path = cpuinfo(X86)
    assert host.cpuinfo(host.MODEL) == "Some CPU @ 2.0GHz"
    path.write_text(ARM)
    assert host.cpuinfo(host.MODEL) == "Some CPU @ 2.0GHz"


def test_arm_features_key_the_kernels_and_the_boards_model_names_the_host(cpuinfo):
    cpuinfo(ARM)
    assert rates_file.cpu_model() == "Raspberry Pi 4"
    assert cpu_flags() == []  # x86's flags only: the SIMD level is NEON by the machine's name
    assert kernel_cache._cpu() == f"{platform.machine()}  {_digest('asimd fp')}"


def test_without_the_file_each_reader_keeps_its_fallback(cpuinfo):
    cpuinfo(None)
    assert host.cpuinfo(host.MODEL) is None
    assert rates_file.cpu_model() == (platform.processor() or platform.machine())
    assert cpu_flags() is None
    assert kernel_cache._cpu() == f"{platform.machine()}  {_digest('')}"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no affinity mask on this system")
def test_the_cores_a_process_may_use_are_its_affinity_mask_not_the_machines():
    mask = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(mask)})  # as `taskset -c N oxi ...` runs it
    try:
        assert host.cores() == threads_for(None) == 1
        assert threads_for(8) == 1
        # auto's CPU estimate counts the cores the kernels will get; --threads' ceiling stays the machine's, so a
        # recipe valid on a workstation stays valid in a narrower farm slot.
        assert max_threads() == THREADS_PER_CORE * (os.cpu_count() or 1)
        blur = ([Blur(5.0)], 4096, 2160, 4)
        one_core = estimate(*blur, rates=Rates()).host_s
    finally:
        os.sched_setaffinity(0, mask)
    assert host.cores() == threads_for(None) == len(mask)
    assert estimate(*blur, rates=Rates()).host_s == pytest.approx(one_core / len(mask))
