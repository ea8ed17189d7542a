"""Compiling the CPU kernels into the kernel cache: a job's modules in a background process, or every module
ahead on every core (`oxi probe --compile`).

A module is the unit: every form its kernels may be called with (each module's FORMS) compiles at once, so any
later job using that op finds it, whatever its pixel types. `python -m oxi_cli.backends.cpu.compile MODULE...`
is the background compile a cold job starts; `compile_modules` is the same in-process (for a long-lived
service that keeps kernels loaded).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from importlib import import_module
from typing import Any

from oxi_cli import kernel_cache
from oxi_cli.backends.cpu.cold import EXPECTED_S
from oxi_cli.bytecode import use_own_cache


def forms(module: str) -> list[tuple[Any, tuple]]:
    """(kernel, argument types) of every form of a kernel module."""
    return list(import_module(f"oxi_cli.backends.cpu.kernels.{module}").FORMS)


def compile_module(module: str) -> float:
    """Compile (or load, where the cache has it) every form of one kernel module; returns the seconds taken."""
    t0 = time.perf_counter()
    with kernel_cache.lock(blocking=True, name=f".compiling-{module}.lock"):
        for kernel, argtypes in forms(module):
            kernel.compile(argtypes)
    return time.perf_counter() - t0


def compile_modules(names: Iterable[str], progress: Callable[[str, float], None] | None = None) -> dict[str, float]:
    """Compile these kernel modules in this process, one after another, and record them in the cache's
    manifest; module -> seconds."""
    done: dict[str, float] = {}
    for name in names:
        done[name] = compile_module(name)
        kernel_cache.record({name: done[name]})
        if progress is not None:
            progress(name, done[name])
    return done


def _worker(names: Sequence[str]) -> dict[str, float]:
    use_own_cache()  # a spawned interpreter: Numba's bytecode as the command's process finds it
    return compile_modules(names)


def compile_everything(workers: int, progress: Callable[[str, float], None] | None = None,
                       names: Sequence[str] | None = None) -> dict[str, float]:
    """Every kernel module, spread over `workers` processes (Numba compiles one function at a time per process,
    holding its compiler lock), the slowest first; module -> seconds."""
    names = sorted(names if names is not None else backend_modules(), key=lambda n: -EXPECTED_S.get(n, 1.0))
    if workers <= 1 or len(names) <= 1:
        return compile_modules(names, progress)
    done: dict[str, float] = {}
    import multiprocessing

    # Fresh interpreters: a fork of a process whose threads hold locks (Numba's, the pool's) may deadlock.
    with ProcessPoolExecutor(min(workers, len(names)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_worker, [name]): name for name in names}
        for future in as_completed(futures):
            for name, seconds in future.result().items():
                done[name] = seconds
                if progress is not None:
                    progress(name, seconds)
    return done


def backend_modules() -> list[str]:
    """The CPU backend's kernel modules (kernel_cache.modules() less the LUT row scanner, which formats/ owns)."""
    return [m for m in kernel_cache.modules() if m != kernel_cache.SCANNER]


def _yield_to_jobs() -> None:
    """The jobs running meanwhile (this one's parent among them) come first: the lowest priority, for this
    process and, on Linux, for its session's scheduling group (a new session is a group of its own, shared the
    CPU equally with the job's whatever the nice value: the job ran on one of a 2-core machine's two cores)."""
    if hasattr(os, "nice"):
        os.nice(19)
    with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as group:
        group.write("19")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m oxi_cli.backends.cpu.compile", description=__doc__)
    parser.add_argument("modules", nargs="*", help="kernel modules (default: every one)")
    parser.add_argument("--background", action="store_true", help="a cold job's: lower priority, one at a time")
    args = parser.parse_args(argv)
    # Numba's bytecode goes where the next `oxi` process looks for it: a job on stand-ins never imported Numba,
    # so without this the next job would compile Numba's own source (1 s on a 16-core host with an H200 GPU,
    # bench/bench_first_run.py).
    use_own_cache()
    names = args.modules or backend_modules()
    unknown = sorted(set(names) - set(backend_modules()))
    if unknown:
        print(f"oxi: unknown kernel module(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    if not args.background:
        _log(compile_modules(names))
        return 0
    _yield_to_jobs()
    try:
        kernel_cache.want(names)
        _take_turn()
    finally:
        kernel_cache.done_in_background()
    return 0


def _take_turn() -> None:
    """The user's one background compile: while this process holds the turn it compiles every module asked
    for (by the job that started it and by those that found it running); without the turn it leaves them to
    the process that has it. After letting the turn go it looks once more, for a module asked for just then."""
    tried: set[str] = set()
    while True:
        with kernel_cache.background_turn() as mine:
            if not mine:
                return
            while todo := sorted(kernel_cache.wanted() & set(backend_modules()) - tried):
                tried.update(todo)
                _log(compile_modules(todo))
        if not kernel_cache.wanted() & set(backend_modules()) - tried:
            return


def _log(done: dict[str, float]) -> None:
    if done:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} pid {os.getpid()} compiled "
              f"{', '.join(f'{n} {s:.1f} s' for n, s in done.items())} into {kernel_cache.location().path}",
              flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
