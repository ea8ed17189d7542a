"""One place for Numba's options: the kernel cache folder, the decorators every kernel uses (the CPU backend's and
the LUT row scanner's) and running with cached kernels only; below backends and formats, so neither imports the
other."""

from __future__ import annotations

import contextlib
import importlib.abc
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from oxi_cli import kernel_cache, trust

# Numba imports these when they are installed, for what no oxi kernel uses: SciPy (0.2-0.3 s, probed when
# numba.np.arraymath loads, which only compiling needs) to back np.dot with BLAS, coverage (0.11 s of
# `python -X importtime -c "import numba"` on a 16-core host with an H100 GPU) to report lines its compiler covered.
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
    Numba's runtime started: 0.17 s of a 4K colour job's 0.23 s warm-up on a 2-core x86-64 machine (AVX-512).
    Compiling, on a
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


class ColdKernel(Exception):
    """A kernel this job needs is not in the cache, and compiling was not allowed (`cached_only`)."""

    def __init__(self, name: str, args: tuple) -> None:
        super().__init__(f"{name}{args} is not compiled yet")
        self.name = name


_allowed = threading.local()


@contextlib.contextmanager
def cached_only() -> Iterator[None]:
    """Kernels called on this thread inside the block load from the cache or raise ColdKernel: nothing
    compiles (Numba announces every compile as a `numba:compile` event, which _Refuse answers)."""
    before = getattr(_allowed, "cached_only", False)
    _allowed.cached_only = True
    try:
        yield
    finally:
        _allowed.cached_only = before


def _install_refusal() -> None:
    from numba.core import event

    class _Refuse(event.Listener):
        def on_start(self, ev) -> None:  # noqa: ANN001
            if getattr(_allowed, "cached_only", False):
                dispatcher = ev.data["dispatcher"]
                raise ColdKernel(getattr(dispatcher, "__name__", str(dispatcher)), tuple(ev.data["args"]))

        def on_end(self, ev) -> None:  # noqa: ANN001
            pass

    event.register("numba:compile", _Refuse())


def _install_locator() -> None:
    """oxi's kernels cache into kernel_cache.location(): a folder per key, named by the package path of each
    source folder (not its place on disk, so a cache built once serves any install of the same oxi), read-only
    where the location is (then nothing is saved: a kernel compiled anyway stays in this process)."""
    from numba.core import caching
    from numba.core.caching import Cache, _CacheLocator, _SourceFileBackedLocatorMixin

    where = kernel_cache.location()
    package = Path(__file__).resolve().parent

    class _OxiLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
        def __init__(self, py_func, py_file) -> None:  # noqa: ANN001
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            relative = Path(py_file).resolve().parent.relative_to(package.parent)
            self._cache_path = str(where.path / ".".join(relative.parts))

        def get_cache_path(self) -> str:
            return self._cache_path

        def ensure_cache_path(self) -> None:
            if where.writable:
                super().ensure_cache_path()
            elif not os.path.isdir(self._cache_path):
                raise OSError(f"{self._cache_path} does not exist")

        @classmethod
        def from_function(cls, py_func, py_file):  # noqa: ANN001, ANN206
            inside = where.path is not None and Path(py_file).resolve().is_relative_to(package)
            return super().from_function(py_func, py_file) if inside else None

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in Numba 0.61
    impl._locator_classes.insert(0, _OxiLocator)
    original = Cache.save_overload

    def save_overload(self, sig, data):  # noqa: ANN001, ANN202
        if isinstance(self._impl.locator, _OxiLocator) and not where.writable:
            return None
        return original(self, sig, data)

    Cache.save_overload = save_overload
    _save_entries_whole()


def _save_entries_whole() -> None:
    """Several processes compile into one cache at once (`oxi probe --compile`'s workers, a background compile
    beside a job): Numba names a new entry's file by counting its index's entries, so two processes saving
    different signatures of one function could each write entry 1, the index naming one signature and the file
    holding the other's machine code. Each entry gets a file name of its own, written before the index names
    it: a lost race costs an entry (compiled again later), never the wrong code."""
    import uuid

    from numba.core.caching import IndexDataCacheFile

    if not all(hasattr(IndexDataCacheFile, n) for n in ("_load_index", "_save_index", "_save_data")):
        return

    def save(self, key, data):  # noqa: ANN001, ANN202
        name = f"{self._index_name.removesuffix('.nbi')}.{uuid.uuid4().hex[:16]}.nbc"
        self._save_data(name, data)
        overloads = self._load_index()
        overloads[key] = name
        self._save_index(overloads)

    IndexDataCacheFile.save = save


def _guard_cache() -> bool:
    """Every load and save of a Numba cache entry in an oxi process first checks its folder (trust.py), in
    whichever process and however long after the cache was chosen: a service worker forked hours ago too. A
    Numba index file is a pickle, and one planted where others could write runs as this user when loaded;
    refused, the kernel compiles in memory and nothing is saved. False, and oxi's kernels are never cached,
    where Numba no longer has what this wraps (tests/backends/test_jit_cache.py pins it)."""
    from numba.core.caching import Cache

    if not all(callable(getattr(Cache, n, None)) for n in ("load_overload", "save_overload")) or not isinstance(
            getattr(Cache, "cache_path", None), property):
        return False
    load, save = Cache.load_overload, Cache.save_overload

    def guarded_load(self, sig, target_context):  # noqa: ANN001, ANN202
        return None if trust.why_untrusted(self.cache_path) else load(self, sig, target_context)

    def guarded_save(self, sig, data):  # noqa: ANN001, ANN202
        return None if trust.why_untrusted(self.cache_path) else save(self, sig, data)

    guarded_load.__wrapped__, guarded_save.__wrapped__ = load, save  # type: ignore[attr-defined]
    Cache.load_overload, Cache.save_overload = guarded_load, guarded_save
    return True


_import_numba_lean()
_load_cached_kernels_lean()
_install_locator()
_GUARDED = _guard_cache()
_install_refusal()

import numba  # noqa: E402


# Kernels are serial loops over a block of pixels or rows, run on every core by a thread pool
# (backends/cpu/pool.py) with the GIL released. Numba's parallel=True compiled each loop 3-4x slower (its parfor
# passes took most of a minute for ACES 2.0), for the same speed. No fastmath: NaN and Inf must propagate
# exactly as the reference implementations say.
def _distinct(jit: Callable[[Callable], Any]) -> Callable[[Callable], Any]:
    """A kernel decorator whose arrays LLVM may take as distinct (noalias), as Numba's parallel loops took them:
    without that, a loop writing R, G, B and reading a LUT at computed indices does not vectorise (the 3D LUT
    ran 5x slower). Every caller passes planes that do not overlap, or that the kernel leaves alone."""

    def decorate(func: Callable) -> Any:
        dispatcher = jit(func)
        compiler = getattr(dispatcher, "_compiler", None)
        customize = getattr(compiler, "_customize_flags", None)
        if customize is not None:

            def distinct(flags):  # noqa: ANN001, ANN202
                flags = customize(flags)
                flags.noalias = True
                return flags

            compiler._customize_flags = distinct
        return dispatcher

    return decorate


# Else every process compiles: no folder is safe to use, or Numba's cache cannot be guarded.
_CACHE = _GUARDED and kernel_cache.location().path is not None
kernel = _distinct(numba.njit(cache=_CACHE, nogil=True))
# Neighbourhood sums may fuse multiply-adds (more accurate, never changes NaN/Inf behaviour).
spatial_kernel = _distinct(numba.njit(cache=_CACHE, nogil=True, fastmath={"contract"}))
# Loops LLVM should vectorise divide as IEEE says (x / 0 is +-Inf or NaN): Numba's default checks every divisor
# for zero to raise ZeroDivisionError, a branch in the loop, which no longer vectorises.
vector_kernel = _distinct(numba.njit(cache=_CACHE, nogil=True, error_model="numpy"))
# Per-pixel functions: typed and compiled once per signature, then inlined by LLVM into every loop calling them
# (forceinline), so the loops still vectorise. Numba's own inlining (inline="always") typed and lowered them again
# at every call site: 40-60% of a kernel's compile time. Only kernels call them, so no Python wrappers.
serial = numba.njit(cache=_CACHE, nogil=True, error_model="numpy", forceinline=True, no_cpython_wrapper=True,
                    no_cfunc_wrapper=True, _nrt=False)
# The same for neighbourhood sums (a spatial_kernel's fused multiply-adds).
spatial_serial = numba.njit(cache=_CACHE, nogil=True, fastmath={"contract"}, forceinline=True,
                            no_cpython_wrapper=True, no_cfunc_wrapper=True, _nrt=False)
# Maths helpers that such loops call a dozen times each (kernels/mathf.py): compiled once, inlined by LLVM where
# small enough; `helper_inline` for the ones LLVM would leave as calls.
helper = numba.njit(cache=_CACHE, nogil=True, error_model="numpy", fastmath={"contract"})
helper_inline = serial


# Argument types of the forms kernels are compiled for ahead (each kernel module's FORMS): what numba.typeof
# gives the arrays and scalars a job passes (C-contiguous, writable planes; Python ints and bools).
F32, U16, I32 = numba.float32[::1], numba.uint16[::1], numba.int32[::1]
F32_2D, U16_2D, I32_2D = numba.float32[:, ::1], numba.uint16[:, ::1], numba.int32[:, ::1]
I64, BOOL = numba.int64, numba.boolean


