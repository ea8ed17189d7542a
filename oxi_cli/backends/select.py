"""Pick the compute backend from --backend / OXI_BACKEND (the GPU helper extends this with wgpu adapters)."""

from __future__ import annotations

import os

from oxi_cli.backends.base import Backend
from oxi_cli.errors import BackendUnavailable, UsageError

KINDS = ("auto", "cpu", "gpu")


def get_backend(kind: str = "auto", device: int | None = None, threads: int | None = None) -> Backend:
    """`auto` prefers a hardware GPU, then the CPU; `gpu` demands a GPU; `cpu` is the Numba backend."""
    kind = (kind or os.environ.get("OXI_BACKEND") or "auto").lower()
    if kind not in KINDS:
        raise UsageError(f"--backend must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "gpu":
        raise BackendUnavailable("the GPU backend is not available in this build; use --backend cpu")
    from oxi_cli.backends.cpu.backend import CpuBackend

    return CpuBackend(threads)
