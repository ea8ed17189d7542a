"""One backend shared by a batch's worker threads, and how --json names what it computes on."""

from __future__ import annotations

import os
import threading
from typing import Any

from oxi_cli.backends import registry


class SerializedBackend:
    """One backend shared by every worker thread, one call at a time.

    Kernels already use every core (Numba) or the whole GPU, and neither backend is meant to be driven
    from two threads at once (Numba's workqueue layer aborts on it). So --jobs overlaps decoding and
    encoding of some files with the compute of another, and never oversubscribes the device.
    """

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._backend, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)

        return call


def device_name(raw: Any) -> str:
    """What a backend computes on, as --json's `device` names it: its GPU adapter, or this host's processor."""
    adapter = getattr(raw, "adapter", None) if registry.kind(raw.name).devices else None
    if adapter is not None:
        return f"{adapter.name} ({adapter.api})"
    import platform

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
