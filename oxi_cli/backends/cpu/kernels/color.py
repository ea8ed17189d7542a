"""Colour chains on the CPU: each op's own loop (its module's `LONE`), chained block by block on every core."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from oxi_cli.backends.cpu import kernels
from oxi_cli.backends.cpu.kernels.half import gather, scatter
from oxi_cli.backends.cpu.pool import run_blocks, split
from oxi_cli.ops.program import Program

# Pixels a thread runs through every op of a chain at a time: 1 MiB of float32 R, G, B, A scratch, in L2. Each
# block is its own task for the pool (no join between ops), so the block only has to outlast a task's handoff
# (microseconds) by far.
BLOCK_PIXELS = 1 << 16
# Blocks no smaller than this where an image has fewer pixels than threads x 4 x BLOCK_PIXELS.
LEAST_PIXELS = 1 << 12
_scratch = threading.local()


_LOOPS: dict[int, Callable[..., None]] = {}
# Codes whose loops also take R, G, B, A as they entered the program, after their other arguments (a kernel
# module lists them in its SOURCE): kernels/premult.py's REPREMULT multiplies by the alpha each pixel entered with.
_READS_SOURCE: set[int] = set()


def load_loops(names: Iterable[str]) -> None:
    """Register the loops (`LONE`) of the kernel modules with these names. An op's kernels live in the module
    named as its own (ops/cdl.py, kernels/cdl.py), so a job imports only its ops' kernels: every module at once
    was 30 ms of a 4K cdl's warm-up on a 2-core x86-64 machine (AVX-512)."""
    for name in names:
        home = f"{kernels.__name__}.{name}"
        if importlib.util.find_spec(home) is not None:  # an op kept elsewhere is found by _loop's full search
            module = importlib.import_module(home)
            _LOOPS.update(getattr(module, "LONE", {}))
            _READS_SOURCE.update(getattr(module, "SOURCE", ()))


def all_loops() -> dict[int, Callable[..., None]]:
    """Op code -> the loop that runs that op over flat planes, from every kernel module (so a new op
    registers its loop in its own module and nowhere else)."""
    load_loops(m.name for m in pkgutil.iter_modules(kernels.__path__) if f"{kernels.__name__}.{m.name}" != __name__)
    return _LOOPS


def _loop(code: int) -> Callable[..., None]:
    return _LOOPS[code] if code in _LOOPS else all_loops()[code]


def _scratch_rows(pixels: int) -> np.ndarray:
    """This thread's float32 scratch: four rows of at least `pixels`."""
    rows = getattr(_scratch, "rows", None)
    if rows is None or rows.shape[1] < pixels:
        rows = _scratch.rows = np.empty((4, pixels), np.float32)
    return rows


def run_program(program: Program, src: Sequence[np.ndarray], dst: Sequence[np.ndarray], threads: int) -> None:
    """Run `program` from flat R, G, B, A planes `src` into `dst` (float32 or half bits; dst may be src).

    The pixels go BLOCK_PIXELS at a time through every op, one block per task on `threads` threads. A lone op
    whose planes are all of one type runs its loop on them directly (half converts in registers); float32 planes
    computed in place are worked in directly by every op; otherwise a block is read into float32 scratch, each
    op works there in place and the result is stored in the destination's type. Values stay float32 between
    ops, as one loop applying every op per pixel keeps them (the results are the same bits), and every op has
    two compiled forms (float32, half). Without `program.uses_alpha` the A planes are never read or written and
    may be any planes of the right type. Loops that read the source (`_READS_SOURCE`) also get `src`'s planes
    of the block; such a chain always works in scratch, so `src` is read as it entered even when `dst` is `src`.
    """
    steps = [(_loop(int(code)), program.params[o:], program.tables[to:], int(n), int(code) in _READS_SOURCE)
             for code, o, to, n in program.ops]
    pixels = src[0].shape[0]
    block = min(BLOCK_PIXELS, split(pixels, threads, LEAST_PIXELS))
    alpha = program.uses_alpha
    one_type = all(p.dtype == src[0].dtype for p in (*src, *dst))
    reads_source = any(reads for *_, reads in steps)
    lone = len(steps) == 1 and one_type and not reads_source
    in_place = (all(s is d for s, d in zip(src, dst, strict=True)) and src[0].dtype == np.float32
                and not reads_source)

    def work(start: int, stop: int) -> None:
        if lone:
            loop, p, t, n, _ = steps[0]
            loop(*(plane[start:stop] for plane in (*src, *dst)), p, t, n)
            return
        if in_place:
            rows = [plane[start:stop] for plane in src]
        else:
            scratch = _scratch_rows(block)
            gather(*src, scratch, start, stop, alpha)
            rows = [scratch[c, : stop - start] for c in range(4)]
        source = [plane[start:stop] for plane in src] if reads_source else []
        for loop, p, t, n, reads in steps:
            loop(*rows, *rows, p, t, n, *(source if reads else ()))
        if not in_place:
            scatter(scratch, *dst, start, stop, alpha)

    run_blocks(work, pixels, block, threads)
