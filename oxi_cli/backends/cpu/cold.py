"""Kernels not compiled yet: found out without compiling (a tiny run on cached kernels only), then the job goes
another way while a background process compiles them for the next job, or, where there is no other way (or the
caller asked to wait), compiles now and says so in one line."""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Container, Hashable, Iterable

from oxi_cli import kernel_cache

# Compile seconds of each module, every form, on one core of a 2-core x86-64 machine (AVX-512) (python -m
# oxi_cli.backends.cpu.compile: 1.2-8 s each, 30 s of CPU in all), rounded up: what the one-line notice and `auto`
# assume.
EXPECTED_S = {"aces2": 8.5, "blur": 6.5, "cdl": 3.0, "exponent": 4.0, "exposure_contrast": 1.5, "half": 5.0,
              "log": 2.5, "lut1d": 5.0, "lut3d": 3.5, "matrix": 2.0, "place": 5.5, "range": 1.5, "resize": 6.5}
DEFAULT_EXPECTED_S = 2.0


# Work (its kernels and their argument types) that ran from compiled kernels in this process: loaded for good.
_READY: set[Hashable] = set()
WAIT_ENV = "OXI_WAIT_FOR_KERNELS"


def waits() -> bool:
    """Whether jobs wait for cold kernels to compile rather than go another way (OXI_WAIT_FOR_KERNELS=1)."""
    return os.environ.get(WAIT_ENV, "").strip() not in ("", "0")


def ready(key: Hashable, trial: Callable[[], None], modules: Iterable[str], other_way: Callable[[], bool],
          wait: bool) -> bool:
    """Whether the work named `key` can run on compiled kernels now. `trial` runs the same kernels on a tiny
    input. If some are not compiled: where `other_way()` (asked only then: it may import OpenColorIO) and not
    `wait`, False, and `modules` compile in a background process for later jobs; otherwise they compile here
    (one line on a terminal says so) and True."""
    if key in _READY:
        return True
    names = sorted(set(modules))
    # Never compiled into this cache (its manifest says): the trial would only import Numba (0.2-0.9 s of a
    # first run) to find that out. Where nothing can compile in the background (a read-only cache), the trial
    # decides, as it does for modules the manifest lists.
    if not wait and never_compiled(names) and _compiles_later() and other_way():
        kernel_cache.compile_in_background(names)
        return False
    from oxi_cli import jit

    try:
        with jit.cached_only():
            trial()
    except jit.ColdKernel:
        if not wait and other_way():
            kernel_cache.compile_in_background(names)
            return False
        notice(names)
        started = time.perf_counter()
        trial()
        kernel_cache.record(dict.fromkeys(names, time.perf_counter() - started))
    _READY.add(key)
    return True


def _compiles_later() -> bool:
    """Whether kernels compiled in the background would reach this cache for the next job."""
    where = kernel_cache.location()
    return where.path is not None and where.writable


def never_compiled(names: Iterable[str]) -> set[str]:
    """The kernel modules among `names` that the kernel cache's manifest does not list as compiled."""
    return set(names) - kernel_cache.compiled()


def expected_seconds(names: Iterable[str]) -> float:
    return sum(EXPECTED_S.get(n, DEFAULT_EXPECTED_S) for n in names)


def notice(modules: Iterable[str]) -> None:
    """The one line a job that must compile prints, on a terminal only (scripts and logs stay clean)."""
    if not sys.stderr.isatty():
        return
    names = sorted(set(modules))
    print(f"oxi: compiling the CPU kernels for {', '.join(names)} (first use here, about "
          f"{max(1, round(expected_seconds(names)))} s; `oxi probe --compile` compiles every kernel ahead)",
          file=sys.stderr, flush=True)


def module_of(op: object) -> str:
    """The kernel module an op runs in: a colour op's is named as its own module (ops/cdl.py, kernels/cdl.py),
    an image op's as the op (resize, blur, place)."""
    from oxi_cli.ops import ImageOp

    return op.kernel_name() if isinstance(op, ImageOp) else type(op).__module__.rsplit(".", 1)[-1]  # type: ignore[attr-defined]


def cold_modules(ops: Iterable[object]) -> set[str]:
    """The kernel modules a chain needs on the CPU (the conversions' included) that the kernel cache's manifest
    does not list: a cheap guess for `auto`, made before any kernel loads (the job itself finds out for sure)."""
    from oxi_cli.ops import ColorOp

    return never_compiled({"half"} | {module_of(op) for op in ops
                                      if not (isinstance(op, ColorOp) and not op.runs_natively())})


def compiles_now(ops: Iterable[object], cold: set[str], stand_ins: Container[str]) -> set[str]:
    """Which of the `cold` modules a job of these ops compiles in its own process (as `ready` decides): every one
    where jobs wait for kernels, else those of ops with no other way (colour ops OpenColorIO cannot stand in
    for, with the conversions beside them; image ops with no NumPy stand-in among `stand_ins`, the backend's)."""
    if not cold or waits():
        return set(cold)
    from oxi_cli.ops import ColorOp, ImageOp
    from oxi_cli.ops.ocio_cpu import covers

    colour = [op for op in ops if isinstance(op, ColorOp) and op.runs_natively()]
    now = {op.name for op in ops if isinstance(op, ImageOp) and op.name not in stand_ins}
    if colour and not (covers(colour) and ocio_available()):
        now |= {module_of(op) for op in colour} | {"half"}
    return now & cold


@functools.cache
def ocio_available() -> bool:
    """OpenColorIO's CPU processor can stand in for the colour kernels (it is a dependency; a broken install
    leaves the kernels the only way)."""
    try:
        import PyOpenColorIO  # noqa: F401
    except ImportError:
        return False
    return True
