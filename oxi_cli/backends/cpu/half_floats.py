"""Half floats on this CPU, known without loading Numba: whether kernels convert them in registers, and the
uint16 view of a half plane that kernels take (kernels/half.py converts)."""

from __future__ import annotations

import functools
import os
import platform

import numpy as np

from oxi_cli.backends.cpu.info import cpu_flags


@functools.cache
def half_in_hardware() -> bool:
    """Whether this CPU converts half in an instruction: F16C on x86 (since 2012), always on 64-bit ARM.
    Elsewhere LLVM would call a runtime helper the JIT may not find, so half stays out of the kernels
    (OXI_HALF_IN_KERNELS=0 forces that path, to test it). Linux's flags answer without loading LLVM, which a
    job whose kernels are not compiled yet never needs."""
    if os.environ.get("OXI_HALF_IN_KERNELS", "").strip() == "0":
        return False
    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        return True
    if machine not in ("x86_64", "amd64"):
        return False
    flags = cpu_flags()
    if flags is not None:
        return "f16c" in flags
    from llvmlite import binding

    return bool(binding.get_host_cpu_features().get("f16c", False))


def bits(a: np.ndarray) -> np.ndarray:
    """The array a kernel takes: half arrays as their uint16 bits, float32 as is."""
    return a.view(np.uint16) if a.dtype == np.float16 else a
