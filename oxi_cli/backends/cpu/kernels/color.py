"""Colour chains on the CPU: each op's own parallel loop (its module's `LONE`), chained block by block."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from oxi_cli.backends.cpu import kernels
from oxi_cli.backends.cpu.kernels.half import convert
from oxi_cli.ops.program import Program

# Pixels a chain of several ops runs through all of them at a time: 12 MiB of float32 R, G, B scratch (in L3;
# 64K pixels a thread on 16 cores, inside L2). Each op of each block is one parallel loop and one join of
# every thread, and a join waits for a thread another process has pushed off its core: on the 2-core box,
# busy, a 3-op chain over 4096x2160 half took 0.5 s in 1M blocks, 0.8 s in 256K and 2.7 s in 64K (best of 7).
BLOCK_PIXELS = 1 << 20


_LOOPS: dict[int, Callable[..., None]] = {}
# Codes whose loops also take R, G, B, A as they entered the program, after their other arguments (a kernel
# module lists them in its SOURCE): kernels/premult.py's REPREMULT gives back the pixels that entered with alpha 0.
_READS_SOURCE: set[int] = set()


def load_loops(names: Iterable[str]) -> None:
    """Register the loops (`LONE`) of the kernel modules with these names. An op's kernels live in the module
    named as its own (ops/cdl.py, kernels/cdl.py), so a job imports only its ops' kernels: every module at once
    was 30 ms of a 4K cdl's warm-up on the 2-core box."""
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


def run_program(program: Program, src: Sequence[np.ndarray], dst: Sequence[np.ndarray], block: int) -> None:
    """Run `program` from flat R, G, B, A planes `src` into `dst` (float32 or half bits; dst may be src).

    One op runs its loop over the whole image. Longer chains go `block` pixels at a time: the first op reads
    the source into float32 scratch, the middle ones work in the scratch in place, the last writes the
    destination, so values stay float32 between ops, as one loop applying every op per pixel keeps them (the
    results are the same bits). Without `program.uses_alpha` the A planes are never read or written and may
    be any planes of the right type. Loops that read the source (`_READS_SOURCE`) get `src`'s planes of the
    same block: a block of `dst` is written after every loop has read it, pixel by pixel by the last loop.
    """
    steps = [(_loop(int(code)), program.params[o:], program.tables[to:], int(n), int(code) in _READS_SOURCE)
             for code, o, to, n in program.ops]
    if len(steps) == 1:
        loop, p, t, n, reads = steps[0]
        loop(*src, *dst, p, t, n, *(src if reads else ()))
        return
    pixels = src[0].shape[0]
    size = max(1, min(block, pixels))
    scratch = np.empty((4 if program.uses_alpha else 3, size), np.float32)
    for start in range(0, pixels, size):
        stop = min(start + size, pixels)
        first = [plane[start:stop] for plane in src]
        last = [plane[start:stop] for plane in dst]
        work = [plane[: stop - start] for plane in scratch]
        if program.uses_alpha:
            # With alpha every op runs float32 to float32: an op reading half R, G, B beside a float32 alpha is
            # compiled apart, and LLVM may then order its sums otherwise (a NaN's sign can change).
            for plane, wide in zip(first, work, strict=True):
                convert(plane, wide)
            first = last = work
        else:
            work.append(work[0])
        source = [plane[start:stop] for plane in src]
        for k, (loop, p, t, n, reads) in enumerate(steps):
            loop(*(first if k == 0 else work), *(last if k == len(steps) - 1 else work), p, t, n,
                 *(source if reads else ()))
        if program.uses_alpha:
            for wide, plane in zip(work, dst, strict=True):
                convert(wide, plane[start:stop])
