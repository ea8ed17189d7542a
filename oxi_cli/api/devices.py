"""Compute backends for Python callers: what `oxi probe` finds, and backends held open across calls."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from oxi_cli.batch.shared_backend import SerializedBackend, device_name


class Backend:
    """A compute backend held open in this process: kernels loaded, GPU device open. Pass it as `backend=` to
    apply() and process(); every call then runs warm. Safe to share between threads (one call at a time runs
    on it, as a batch's files share one). Made by open_backend()."""

    def __init__(self, raw: Any, kind: str) -> None:
        self._raw = SerializedBackend(raw)
        self._kind = kind
        self._reason: str = raw.reason

    @property
    def kind(self) -> str:
        """What was asked for: "auto" or a backend's name ("cpu", "gpu")."""
        return self._kind

    @property
    def name(self) -> str:
        """What it computes on: a backend's name ("cpu", "gpu")."""
        return str(self._raw.name)

    @property
    def device(self) -> str:
        """The GPU adapter (name and API) or the host's processor, as process() results name it."""
        return device_name(self._raw)

    @property
    def reason(self) -> str:
        """Why this backend, in `oxi --plan`'s words."""
        return self._reason

    def __repr__(self) -> str:
        return f"<oxi Backend {self.name}: {self.device}>"


def open_backend(kind: str = "auto", *, device: int | None = None, threads: int | None = None) -> Backend:
    """Open a compute backend now and keep it: "cpu" (Numba, `threads` kernel threads: the default is Numba's),
    "gpu" (the best wgpu adapter, software ones included, or adapter `device` from probe()), or "auto"
    (OXI_BACKEND if set, else a hardware GPU when one opens, else the CPU). The GPU device is opened once per
    process and shared by every Backend on it. Raises BackendUnavailable (or UsageError for a wrong kind)."""
    from oxi_cli.backends.select import get_backend, resolve_kind

    resolved = resolve_kind(kind)
    raw = get_backend(resolved, device, threads)
    raw.resolve()  # open it here: a missing GPU is this call's error, not the first job's
    return Backend(raw, resolved)


def probe() -> dict[str, Any]:
    """The document `oxi probe --json` prints: `devices` (GPU adapters with their index, then the CPU backend,
    each with the rates `auto` weighs it by), `auto` (its pick and why), `rates` and `problems`."""
    from oxi_cli.cli.probe import collect

    return collect()


# The backends apply() and process() opened for a kind given by name, kept for the next call (the process's
# warm state: its kernels and GPU device are opened once whatever holds them).
_HELD: dict[tuple[str, int | None, int | None], Backend] = {}
_HOLDING = threading.Lock()


def held(kind: str, device: int | None = None, threads: int | None = None) -> Backend:
    """The Backend for a resolved kind (a backend's name), opened on first use and kept."""
    key = (kind, device, threads)
    with _HOLDING:
        backend = _HELD.get(key)
        if backend is None:
            backend = _HELD[key] = open_backend(kind, device=device, threads=threads)
        return backend


def backend_for(asked: str | Backend | None, ops: Sequence[Any], width: int, height: int, channels: int,
                bytes_per_sample: int) -> Backend:
    """The backend one in-memory job runs on: the one given, or by kind; `auto` (and None) weighs the job as the
    command weighs a file (backends/select.py, cost.py): the host unless a device is estimated faster."""
    if isinstance(asked, Backend):
        return asked
    from oxi_cli.backends.registry import HOST
    from oxi_cli.backends.select import Workload, devices_possible, first_with_device, ranked, resolve_kind

    kind = resolve_kind(asked)
    if kind != "auto":
        return held(kind)
    present = devices_possible()  # none at once where no device node exists
    if not present:
        return held(HOST)
    estimate = Workload(ops, width, height, channels, bytes_per_sample).estimate(None, among=present)
    found = first_with_device(ranked(estimate))
    return held(*found) if found is not None else held(HOST)
