"""One backend shared by a batch's worker threads, and how --json names what it computes on."""

from __future__ import annotations

import threading
from typing import Any

from oxi_cli.backends import registry
from oxi_cli.backends.base import host_label


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
    """What a backend computes on, as --json's `device` names it: a backend with devices says which (opening it),
    the host is described without opening it (a job with nothing to compute never loads its kernels)."""
    if registry.kind(raw.name).devices:
        return str(raw.device_label)
    return host_label()
