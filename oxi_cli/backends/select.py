"""Pick the compute backend from --backend / OXI_BACKEND / --device: auto, or one registered backend by name."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oxi_cli.backends import registry
from oxi_cli.backends.base import Backend
from oxi_cli.errors import BackendUnavailable, OxiError, UsageError


def kinds() -> tuple[str, ...]:
    """What --backend takes: auto, or a registered backend's name (asked each time: a registration counts)."""
    return ("auto", *registry.KINDS)


@dataclass(frozen=True)
class Choice:
    """What `auto` (or an explicit kind) resolves to, and the one-line reason `oxi probe` prints."""

    kind: str  # a registered backend's name
    device: int | None  # its device's index (--device), None for the host
    reason: str


# Backends open_early() started, by (kind, device), for get_backend() to hand out.
_EARLY: dict[tuple[str, int | None], DeferredBackend] = {}


def open_early(kind: str | None, device: int | None) -> None:
    """Start opening the device that a command's --backend (or OXI_BACKEND) and --device name, once they are
    parsed and before the command's checks and reads: call it first thing in a job.

    wgpu's start (~0.75 s on a 16-core host with an H200 GPU: header parsing, the Vulkan driver, the device) then
    overlaps the command's own checks and imports and the input's decoding. Anything it cannot make sense of is
    left for get_backend to report.
    """
    try:
        resolved = resolve_kind(kind)
    except UsageError:
        return
    if resolved == registry.HOST or (resolved == "auto" and device is None):
        return  # auto weighs each job first (get_backend's `job`): opening a device it may not pick costs a core
    _EARLY[(resolved, device)] = _deferred(resolved, device, None)


def get_backend(
    kind: str | None = "auto",
    device: int | None = None,
    threads: int | None = None,
    *,
    needed: bool = True,
    job: Workload | None = None,
) -> Backend:
    """`auto` (or None): OXI_BACKEND if set, else whichever of the host and each registered backend's device for
    `auto` (for wgpu the best hardware GPU, discrete before integrated; software adapters rank below the CPU)
    would finish `job` soonest by the cost model (backends/cost.py, with this host's measured rates where `oxi
    probe --calibrate` cached them; a device when no job is given). A backend by name: its best device of any
    kind, or device `device` (`cpu`: the Numba backend with `threads`).

    The backend comes back at once and opens in a background thread (wgpu's start costs ~0.5 s on a 16-core host
    with an H200 GPU, importing Numba ~0.2 s), so the caller can read its input meanwhile; the first use waits.
    Then, for a backend named, a missing device or one that fails to open raises BackendUnavailable; with `auto`
    it is reported on stderr and the host backend is used. `needed=False` (nothing to compute, e.g. a copy): the
    host backend then opens only if something uses it. Its `reason` says why this backend; with a `job`, its
    `estimate` holds every backend's estimated seconds (forced kinds included: --plan shows them).
    """
    kind = resolve_choice(kind, device)
    present = devices_possible() if kind == "auto" and device is None and needed else []
    # The device estimated is the one that would run: --device's, auto's hardware one, or what a backend forced
    # opens.
    estimate = job.estimate(threads, _picked(kind, device), any_kind=not present, among=present or None) if (
        job is not None and needed) else None
    weighed = estimate if present else None
    backend, why = _choose(kind, device, threads, needed, present, weighed)
    backend.reason, backend.estimate, backend.weighed = why, estimate, weighed
    return backend  # type: ignore[return-value]


def _picked(kind: str, device: int | None) -> dict[str, int]:
    """--device's index by the backend it picks among: the one named, or with auto the first with devices."""
    return {} if device is None else {kind if kind != "auto" else device_backend(): device}


def ranked(estimate: Any) -> list[str]:
    """Backend names, the fastest by `estimate` first (the host first of equals)."""
    seconds = estimate.seconds
    return sorted(seconds, key=seconds.__getitem__)


def first_with_device(names: Sequence[str]) -> tuple[str, int] | None:
    """The first of `names` (best first) with a device `auto` would use, and its index; None when the host comes
    first or none has one."""
    for name in names:
        if name == registry.HOST:
            return None
        index, _ = registry.kind(name).auto_device()
        if index is not None:
            return name, index
    return None


def auto_candidates(chosen: DeferredBackend, threads: int | None, names: Sequence[str]) -> dict[str, DeferredBackend]:
    """The backends `names` for a batch to time (batch/trial.py), by name: `chosen` (auto's pick by estimate)
    where it is one of them, the others opening in the background now. A device that will not open stands in
    as the host."""
    picked = chosen.weighed.faster if chosen.weighed is not None else None
    return {name: chosen if name == picked else _deferred_cpu(threads) if name == registry.HOST else
            _deferred_first([name], threads) for name in names}


def _choose(
    kind: str, device: int | None, threads: int | None, needed: bool, present: list[str], weighed: Any
) -> tuple[DeferredBackend, str]:
    """The backend for a resolved kind and why; `present`: the backends auto may find a device of; `weighed`: the
    estimate auto decides by among them and the host."""
    host = registry.kind(registry.HOST).label
    if kind == registry.HOST:
        return _deferred_cpu(threads, needed), f"the {host}, as --backend {kind} (or OXI_BACKEND) asks"
    forced = (f"a {registry.kind(kind).label}, as --backend {kind} (or OXI_BACKEND) asks" if kind != "auto" else
              f"auto: --device {device} asked")
    early = _EARLY.pop((kind, device), None)
    if early is not None:
        if early._fallback is not None:
            early._fallback = lambda: _cpu(threads)
        return early, forced
    if kind != "auto" or device is not None:
        return _deferred(kind, device, threads), forced
    if not needed:  # nothing to compute (a copy): opening a device in the background only competes with decoding
        return _deferred_cpu(threads, needed), "auto: nothing to compute"
    if not present:
        labels = " or ".join(k.label for k in registry.with_devices())
        return _deferred_cpu(threads, needed), f"auto: the {host}, no {labels} device on this machine"
    if weighed is None:
        why = f"auto: the best {registry.kind(present[0]).label}, if one opens (no job to weigh)"
        return _deferred_first(present, threads), why
    order = ranked(weighed)
    if order[0] == registry.HOST:
        return _deferred_cpu(threads, needed), f"auto: the {host}, estimated faster"
    why = f"auto: a {registry.kind(order[0]).label} if one opens, estimated faster"
    return _deferred_first(order, threads), why


@dataclass(frozen=True)
class Workload:
    """What `auto` weighs: the chain and the first image's size, channels and bytes per sample, and how many
    files alike the process will run (a batch opens a device once)."""

    ops: Sequence[Any]
    width: int
    height: int
    channels: int
    bytes_per_sample: int
    files: int = 1

    def estimate(self, threads: int | None, picked: Mapping[str, int] | None = None, any_kind: bool = False,
                 among: Sequence[str] | None = None) -> Any:
        """Each backend's seconds with this host's rates (cost.load_rates: the device `picked` gives it, else
        auto's, or with `any_kind` the one the backend forced would open), the host's with what its kernels not
        compiled yet cost this job (cpu/cold.py); `among`: the backends with devices to weigh (default: all)."""
        from oxi_cli.backends.cost import estimate, load_rates
        from oxi_cli.backends.cpu.backend import STAND_INS
        from oxi_cli.backends.cpu.cold import cold_modules, compiles_now, expected_seconds

        cold = cold_modules(self.ops)
        now = compiles_now(self.ops, cold, STAND_INS)
        return estimate(self.ops, self.width, self.height, self.channels, self.bytes_per_sample, cores=threads,
                        rates=load_rates(picked, any_kind), files=self.files, cold=cold,
                        compile_s=expected_seconds(now) if now else None, compiling=now, held=held_kinds(picked),
                        among=among)


def _deferred_cpu(threads: int | None, needed: bool = True) -> DeferredBackend:
    """Importing Numba (~0.2 s) then overlaps the input's decoding, which releases the GIL; a job with nothing
    to compute never imports it."""
    return DeferredBackend(lambda: _cpu(threads), fallback=None, name=registry.HOST, start=needed)


def _deferred(kind: str, device: int | None, threads: int | None) -> DeferredBackend:
    """Backend `kind` (a name: no fallback), or with auto its --device `device`, falling back to the host."""
    if kind != "auto":
        return DeferredBackend(lambda: registry.kind(kind).open(device, None), fallback=None, name=kind)
    picks = device_backend()
    return DeferredBackend(lambda: registry.kind(picks).open(device, None), fallback=lambda: _cpu(threads))


def _deferred_first(names: Sequence[str], threads: int | None) -> DeferredBackend:
    """For auto: the device of the first of `names` (best first) that has one it would use, else the host."""

    def open_auto() -> Backend | None:
        found = first_with_device(names)
        return None if found is None else registry.kind(found[0]).open(found[1], None)

    return DeferredBackend(open_auto, fallback=lambda: _cpu(threads))


class DeferredBackend:
    """A backend opened in a background thread (or, with `start=False`, on first use); any attribute use
    waits for it, then forwards to it.

    `open_backend` returns the backend, or None to take `fallback`; when it raises, `fallback` (auto) is used
    after a warning, or, without one (a backend named by --backend), the error is raised to whoever touches it.
    A `name` known in advance is answered without waiting (a job with nothing to compute only reports it).
    """

    def __init__(
        self,
        open_backend: Callable[[], Backend | None],
        fallback: Callable[[], Backend] | None,
        name: str | None = None,
        start: bool = True,
    ) -> None:
        self._name = name
        self.reason = ""  # why this backend (get_backend)
        self.estimate: Any = None  # every backend's estimated seconds (cost.Estimate), when a job was weighed
        self.weighed: Any = None  # the estimate when `auto` chose by it among the host and the devices present
        self._fallback = fallback
        self.fell_back = False  # a failure mid-job switched it to the fallback (fall_back)
        self._backend: Backend | None = None
        self._opened: Backend | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._open_backend: Callable[[], Backend | None] | None = open_backend
        if start:
            self._open_backend = None
            threading.Thread(target=self._open, args=(open_backend,), name="oxi-backend-open", daemon=True).start()

    def _open(self, open_backend: Callable[[], Backend | None]) -> None:
        try:
            self._opened = open_backend()
        except BaseException as exc:  # handed to the thread that uses the backend
            self._error = exc
        finally:
            self._done.set()

    def resolve(self) -> Backend:
        """The backend in effect, waiting for it to open if it has not yet."""
        with self._lock:
            if self._backend is None:
                if self._open_backend is not None:  # not started (start=False): open here, on first use
                    self._open(self._open_backend)
                    self._open_backend = None
                self._done.wait()
                if self._error is None and self._opened is not None:
                    self._backend = self._opened
                elif self._error is None and self._fallback is not None:
                    self._backend = self._fallback()
                elif self._fallback is None:
                    error = self._error
                    if not isinstance(error, OxiError):
                        error = self._failure(error)
                    raise error
                else:
                    warn(f"{self._error}; using {registry.kind(registry.HOST).title}")
                    self._backend = self._fallback()
            return self._backend

    def _failure(self, error: BaseException) -> BackendUnavailable:
        return registry.kind(self._name or registry.HOST).failed(error)

    def fall_back(self, error: BaseException) -> Backend:
        """After a device failure mid-job (GpuFailure): with `auto`, warn and switch to the host backend for good,
        returning it so the caller can redo the job; for a backend named, raise `error` again.
        """
        if self._fallback is None:
            raise error
        with self._lock:
            warn(f"{error}; redoing it on {registry.kind(registry.HOST).title}")
            self._backend = self._fallback()
            self.fell_back = True
            return self._backend

    @property
    def ready(self) -> bool:
        """Whether the background open has finished (never waits): reporting can skip a device no job used."""
        return self._done.is_set()

    @property
    def name(self) -> str:
        if self._backend is None and self._name is not None:
            return self._name
        return self.resolve().name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self.resolve(), attr)


def resolve_kind(kind: str | None) -> str:
    """A backend named wins; `auto` or None defers to OXI_BACKEND, then means auto."""
    kind = (kind or "auto").strip().lower()
    if kind == "auto":
        kind = (os.environ.get("OXI_BACKEND") or "auto").strip().lower()
        if kind not in kinds():
            raise UsageError(f"OXI_BACKEND must be one of {', '.join(kinds())}, got {kind!r}")
    if kind not in kinds():
        raise UsageError(f"--backend must be one of {', '.join(kinds())}, got {kind!r}")
    return kind


def resolve_choice(kind: str | None, device: int | None) -> str:
    """The kind in effect (resolve_kind) checked against the device asked for: the one place that rule lives,
    for the command's options and for a Python caller's open_backend alike."""
    kind = resolve_kind(kind)
    if kind != "auto" and device is not None and not registry.kind(kind).devices:
        picks = " or ".join(k.devices for k in registry.KINDS.values() if k.devices)
        raise UsageError(f"--device picks {picks}; it cannot be used with --backend {kind}")
    return kind


def device_backend() -> str:
    """The backend --device picks a device of with `auto`: the first with devices this machine may have (by its
    device nodes), else the first that may have software devices, else the first with devices."""
    kinds = registry.with_devices()
    return next((k.name for k in kinds if k.may_have_device()), next((k.name for k in kinds if k.software),
                                                                     kinds[0].name))


def auto_choice(device: int | None = None, thorough: bool = False) -> Choice:
    """Decide `auto` without opening a device: the first backend, in registry order, with a device auto would
    weigh against the host (each job then goes to it or to the host by estimated cost), else the host and why;
    `thorough` (`oxi probe`) looks for devices even where no device node shows, to say which were found."""
    if device is not None:
        return Choice(device_backend(), device, f"--device {device} was asked for")
    reasons = []
    for kind in registry.with_devices():
        index, why = kind.auto_device(thorough)
        if index is not None:
            return Choice(kind.name, index, f"{why}; each job goes to it or to the "
                                            f"{registry.kind(registry.HOST).label} by estimated cost (see --plan)")
        reasons.append(why)
    return Choice(registry.HOST, None, "; ".join(reasons))


def held_kinds(picked: Mapping[str, int] | None = None) -> set[str]:
    """The backends this process holds a device of from an earlier job: the one `picked` names for a backend
    (--device), else any of its devices."""
    picked = picked or {}
    return {k.name for k in registry.with_devices()
            if (held := k.held()) and (k.name not in picked or picked[k.name] in held)}


def held_devices() -> list[str]:
    """Names of the devices this process holds open, of every backend."""
    return [name for k in registry.with_devices() for name in k.held().values()]


def hold_device() -> None:
    """For a long-lived process (a service worker): open the device its jobs will use, in the background, so
    they weigh it as started (no device-opening cost) and find it ready: that of the backend OXI_BACKEND names,
    or auto's. Nothing for the host, where no backend has a device here, or when one is held already."""
    try:
        kind = resolve_kind(None)
    except UsageError:  # a bad OXI_BACKEND: each job reports it
        return
    if held_kinds() or (kind != "auto" and not registry.kind(kind).devices):
        return

    def open_it() -> None:
        with contextlib.suppress(Exception):  # a job that asks for the device reports any failure itself
            if kind != "auto":
                registry.kind(kind).open(None, None)
            elif devices_possible() and (choice := auto_choice()).device is not None:
                registry.kind(choice.kind).open(choice.device, None)

    threading.Thread(target=open_it, name="oxi-hold-device", daemon=True).start()


def devices_possible() -> list[str]:
    """The backends that may have a device `auto` would weigh here, by name, answered without loading them."""
    return [k.name for k in registry.with_devices() if k.may_have_device()]


def warn(message: str) -> None:
    print(f"oxi: warning: {message}", file=sys.stderr)


def _cpu(threads: int | None) -> Backend:
    return registry.kind(registry.HOST).open(None, threads)
