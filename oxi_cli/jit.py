"""One place for Numba's options: a user-level cache folder and the decorators every kernel uses (the CPU
backend's and the LUT row scanner's); below backends and formats, so neither imports the other."""

from __future__ import annotations

import os
from pathlib import Path

from oxi_cli.user_cache import cache_dir, sources_digest


def _sources_key() -> str:
    """A digest of every source a kernel is built from. Numba checks only the timestamp of the file that
    defines a kernel, not of the files it calls into (kernels/half.py, cdl.py, ops/codes.py's op codes):
    a cache folder per digest means an edit or an upgrade never runs stale machine code."""
    here = Path(__file__).parent
    kernels = (here / "backends" / "cpu" / "kernels").glob("*.py")
    return sources_digest([here / "jit.py", here / "ops" / "codes.py", here / "formats" / "rows.py", *kernels])[:16]


def _cache_dir() -> str:
    return cache_dir("numba", _sources_key())


# Must be set before numba is imported: site-packages may be read-only, and a user cache survives upgrades.
os.environ.setdefault("NUMBA_CACHE_DIR", _cache_dir())
# Numba's OpenMP threads spin after each parallel loop by default, on cores that the EXR codec threads of a
# band pipeline need; where one of them is descheduled instead, the next loop waits for it. Sleeping at once
# made 8K bands on 16 cores 1.14-1.41x faster (cdl, blur, resize; alternating runs on the H100 box) and a 4K
# cdl on 2 cores 1.41 -> 1.21 s. Set before the OpenMP runtime loads; a user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import importlib.abc  # noqa: E402
import sys  # noqa: E402

# Numba imports these when they are installed, for what no oxi kernel uses: SciPy (0.2-0.3 s, probed when
# numba.np.arraymath loads, which only compiling needs) to back np.dot with BLAS, coverage (0.11 s on the H100
# box) to report lines its compiler covered.
_OPTIONAL = ("scipy", "coverage")


class _Unwanted(importlib.abc.MetaPathFinder):
    """Answers Numba's optional imports as if the packages were absent (Numba carries on without them)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def find_spec(self, name, path, target=None):  # noqa: ANN001
        if name.split(".", 1)[0] in self.names:
            raise ImportError(f"oxi's kernels do not need {name}")
        return None


def _import_numba_lean() -> None:
    # A package the host process already imported (a test run under coverage) costs nothing more, and works.
    blocker = _Unwanted(tuple(n for n in _OPTIONAL if n not in sys.modules))
    sys.meta_path.insert(0, blocker)
    try:
        import numba  # noqa: F401
    finally:
        sys.meta_path.remove(blocker)


def _load_cached_kernels_lean() -> None:
    """Load cached machine code without first installing every typing and lowering registry Numba has.

    Numba refreshes its compiler's registries before each cache load (importing numba.np.linalg, the random
    generators, typed containers, cffi...), though a cached kernel needs only its object code linked and
    Numba's runtime started: 0.17 s of a 4K colour job's 0.23 s warm-up on the 2-core box. Compiling, on a
    cache miss, refreshes them as before. Left alone if a Numba release changes what this relies on.
    """
    from numba.core.caching import Cache
    from numba.core.runtime import rtsys

    original = Cache.load_overload
    if not all(hasattr(Cache, name) for name in ("_load_overload", "_guard_against_spurious_io_errors")):
        return

    def load_overload(self, sig, target_context):  # noqa: ANN001, ANN202
        rtsys.initialize(target_context)  # the runtime (NRT) every array argument's reference counting calls
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    load_overload.__wrapped__ = original  # type: ignore[attr-defined]
    Cache.load_overload = load_overload


_import_numba_lean()
_load_cached_kernels_lean()

import numba  # noqa: E402

# No fastmath: NaN and Inf must propagate exactly as the reference implementations say.
kernel = numba.njit(parallel=True, cache=True, nogil=True)
# Neighbourhood sums may fuse multiply-adds (more accurate, never changes NaN/Inf behaviour).
spatial_kernel = numba.njit(parallel=True, cache=True, nogil=True, fastmath={"contract"})
serial = numba.njit(cache=True, nogil=True, inline="always")
# Loops LLVM should vectorise divide as IEEE says (x / 0 is +-Inf or NaN): Numba's default checks every divisor
# for zero to raise ZeroDivisionError, a branch in the loop, which no longer vectorises.
vector_kernel = numba.njit(parallel=True, cache=True, nogil=True, error_model="numpy")
# Maths helpers that such loops call a dozen times each (kernels/mathf.py): compiled once, inlined by LLVM where
# small enough. Inlined as Numba IR instead, every call is typed and lowered again (a kernel doing that took a
# minute); `helper_inline` is for the thin ones around them that LLVM would leave as calls.
helper = numba.njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
helper_inline = numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
prange = numba.prange


def set_threads(n: int | None) -> int:
    """Clamp a requested thread count to what Numba can use; returns the count in effect."""
    if n is not None:
        numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    return numba.get_num_threads()
