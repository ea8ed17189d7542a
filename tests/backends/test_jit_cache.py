"""Kernels loaded from Numba's cache skip its compiler registries and give the bits a compile gives."""

from __future__ import annotations

import json
import subprocess
import sys

# A CDL and a matrix over half planes holding HDR values, negatives, NaN and Inf; prints the output's digest
# and whether Numba's compiler registries (numba.np.linalg is one of them) were installed.
SCRIPT = """
import hashlib, json, sys
import numpy as np
from oxi_cli.backends.cpu.backend import CpuBackend
from oxi_cli.execute import run_chain
from oxi_cli.ops.cdl import Cdl
from oxi_cli.ops.matrix import Matrix

rng = np.random.default_rng(7)
planes = [(rng.standard_normal((64, 96)) * 40).astype(np.float16) for _ in range(4)]
planes[0][0, :3] = (np.nan, np.inf, -np.inf)
ops = [Cdl(slope=(1.1, 0.9, 1.3), offset=(0.01, 0.0, -0.02), power=(0.8, 1.0, 1.2), sat=0.9),
       Matrix(m=tuple(float(v) for v in rng.uniform(-1, 2, 16)))]
backend = CpuBackend()
out = backend.download_planes(run_chain(backend, planes, ops, True, adopt=False, half_result=True), np.float16)
digest = hashlib.sha1(b"".join(p.tobytes() for p in out)).hexdigest()
print(json.dumps({"digest": digest, "registries": "numba.np.linalg" in sys.modules}))
"""


def run() -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cached_kernels_load_without_the_compiler_registries_and_give_the_same_bits():
    first = run()  # compiles (installing the registries) if the cache is cold, else loads
    second = run()
    assert second["registries"] is False
    assert second["digest"] == first["digest"]


def test_a_cache_entry_is_never_written_over_by_another_signatures_code(tmp_path):
    """Two processes saving different signatures of one function at once (`oxi probe --compile`'s workers): the
    index one of them wrote may be lost, but no entry's machine code is replaced by another signature's."""
    from numba.core.caching import IndexDataCacheFile

    import oxi_cli.jit  # noqa: F401  (installs oxi's saving of cache entries)

    cache = IndexDataCacheFile(str(tmp_path), "kernel-12.py311", source_stamp="sources")
    cache.save("float32 form", "float32 machine code")
    saved = {p.name: p.read_bytes() for p in tmp_path.glob("*.nbc")}
    (tmp_path / "kernel-12.py311.nbi").unlink()  # the other process's index, written last, did not name it
    cache.save("half form", "half machine code")
    assert all((tmp_path / name).read_bytes() == data for name, data in saved.items())
    assert cache.load("half form") == "half machine code"
    assert cache.load("float32 form") is None  # lost: it compiles again, later


# Run after the cache was chosen (trusted then): a folder above it becomes writable by others and index files are
# planted whose first pickle runs a command, as Numba reads an index (pickle.load) when it loads a kernel.
PLANTED = """
import os, pickle, sys
import oxi_cli.jit
from oxi_cli import kernel_cache
from oxi_cli.backends.cpu.kernels import range as kernels

shared, marker = sys.argv[1], sys.argv[2]
folder = kernel_cache.location().path / "oxi_cli.backends.cpu.kernels"
os.chmod(shared, 0o777)

class Planted:
    def __reduce__(self):
        return (os.system, (f"touch {marker}",))

planted = [p for p in folder.iterdir() if p.suffix == ".nbi"]
for index in planted:
    index.write_bytes(pickle.dumps(Planted()))
for kernel, argtypes in kernels.FORMS:
    kernel.compile(argtypes)
print(len(planted))
"""


def test_an_index_planted_after_the_cache_was_chosen_is_never_loaded(tmp_path):
    """The check runs at every load, not once when the process chose its cache (a service worker forked hours
    earlier): the kernels compile in memory and the planted pickles never run."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(shared / "cache")}
    env.pop("OXI_KERNEL_CACHE", None)
    compiled = subprocess.run([sys.executable, "-m", "oxi_cli.backends.cpu.compile", "range"], env=env,
                              capture_output=True, text=True, timeout=600)
    assert compiled.returncode == 0, compiled.stderr
    marker = tmp_path / "ran"
    done = subprocess.run([sys.executable, "-c", PLANTED, str(shared), str(marker)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) > 0  # index files were there to plant
    assert not marker.exists()


def test_numba_still_has_what_the_cache_guard_wraps():
    """jit._guard_cache wraps Cache.load_overload and save_overload and reads Cache.cache_path: a Numba release
    that renames them must fail here (oxi would then cache nothing, safely but slowly)."""
    from numba.core.caching import Cache

    import oxi_cli.jit as jit

    assert jit._GUARDED and jit._CACHE
    assert Cache.load_overload.__name__ == "guarded_load" and Cache.save_overload.__name__ == "guarded_save"
    assert isinstance(Cache.__dict__.get("cache_path"), property)
