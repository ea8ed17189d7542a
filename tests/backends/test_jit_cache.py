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
