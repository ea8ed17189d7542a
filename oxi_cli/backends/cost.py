"""What a job would cost on each backend, so `auto` picks the fastest one rather than the fanciest."""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from oxi_cli.backends import rates_file, registry
from oxi_cli.host import cores as usable_cores
from oxi_cli.ops import ColorOp, ImageOp
from oxi_cli.ops.base import chain_size

DEFAULTS_FROM = "a 16-core host with an H100 GPU (bench/bench_many_core.py, 2026-11-23)"
# How many times a core's time a job's ops take on the CPU while their kernels are not compiled (the stand-ins:
# OpenColorIO's CPU processor for colour ops, 3-8x; NumPy for image ops, 4-5x; 2048x2048 RGBA half, one thread, a
# 2-core x86-64 machine (AVX-512), 2026-11-28), and with OXI_WAIT_FOR_KERNELS=1 the seconds their compile takes
# instead.
COLD_COLOR_SLOWDOWN = 4.0
COLD_IMAGE_SLOWDOWN = 5.0
# What colour ops' stand-in costs before its first pixel, once a job: importing OpenColorIO and building its
# processor, 0.20-0.23 s in a fresh process on a 2-core x86-64 machine (AVX-512) (a CDL through ops/ocio_cpu.for_ops
# on a 2x2 image, 2026-12-07). Counted, a cold HD cdl's estimate came closer to its run (compute 0.31-0.54 s where
# +0.14 was estimated before).
COLD_COLOR_START_S = 0.2


@dataclass(frozen=True)
class HostRates:
    """How fast the host backend computes: `flops_per_core`, float operations per second one core sustains in
    oxi's filters (8K blur σ5.25 and σ20, 16 threads); `color_flops_per_core`, in its colour ops, whose pows and
    table reads cost 3-6x a filter's multiply-add per counted operation (8K CDL: 0.10 s of compute on 16 cores)."""

    flops_per_core: float = 6e9
    color_flops_per_core: float = 1.75e9


@dataclass(frozen=True)
class DeviceRates:
    """How fast a backend with devices of its own works, one device of it.

    `extra_start_s`: what a job on it costs beyond the same job on the host before any pixel is computed
    (importing its library, listing devices, opening one and building pipelines, against importing Numba and
    loading its cached kernels): for wgpu on an H100 0.6-1.7 s in whole jobs, 1.0 typical (calibration's start-up
    alone measures 0.34-0.55 s: in a job the device opening also slows the decoding beside it). `upload_bps`/
    `download_bps`: bytes per second each way, host interleave and half conversion included (calibrated there:
    1.2-2.7 and 1.1-2.0 GB/s). `flops`, `color_flops`: the device's float operations per second in filters and in
    colour ops (calibrated there: 1.45-1.63 and 0.63-0.69 TFLOP/s). `name`: the device measured (empty: defaults).
    """

    flops: float = 1.5e12
    color_flops: float = 0.65e12
    extra_start_s: float = 1.0
    upload_bps: float = 2e9
    download_bps: float = 1.5e9
    name: str = ""


def _default_devices() -> dict[str, DeviceRates]:
    return {k.name: DeviceRates() for k in registry.with_devices()}


@dataclass(frozen=True)
class Rates:
    """How fast each backend works on this host: measured by `oxi probe --calibrate` (backends/calibrate.py)
    and cached, else defaults measured on a 16-core host with an H100 GPU (bench/bench_many_core.py, 2026-11-23: one
    pass, 4K and 8K RGBA half, every op). `devices`: each backend with devices, by registry name, the rates of the
    device it would open. `measured_at` is empty for defaults; `note` says why the cache was not used."""

    host: HostRates = field(default_factory=HostRates)
    devices: dict[str, DeviceRates] = field(default_factory=_default_devices)
    measured_at: str = ""
    note: str = ""

    def device(self, kind: str) -> DeviceRates:
        return self.devices.get(kind, DeviceRates())

    def to_dict(self) -> dict[str, Any]:
        """Flat, each rate behind its backend's name (`cpu_flops_per_core`, `gpu_upload_bps`, `gpu_name`)."""
        doc: dict[str, Any] = {f"{registry.HOST}_{key}": value for key, value in asdict(self.host).items()}
        for kind, rates in self.devices.items():
            doc.update({f"{kind}_{key}": value for key, value in asdict(rates).items() if key != "name"})
        doc["measured_at"] = self.measured_at
        doc.update({f"{kind}_name": rates.name for kind, rates in self.devices.items()})
        return {**doc, "note": self.note, "source": "measured" if self.measured_at else "defaults"}

    def describe(self) -> str:
        """One line for --plan and probe: where the rates come from."""
        if not self.measured_at:
            return f"defaults from {DEFAULTS_FROM} ({self.note or 'not this host'}: run `oxi probe --calibrate`)"
        parts = [registry.kind(registry.HOST).label]
        for kind, rates in self.devices.items():
            label = registry.kind(kind).label
            parts.append(f"{label} {rates.name}" if rates.name else f"{label}: defaults, that {label} was not measured")
        return f"measured on this host {self.measured_at} ({'; '.join(parts)})"


@dataclass(frozen=True)
class DeviceCost:
    """Seconds a job would add on one backend with devices: starting it, moving pixels there and back, computing."""

    start_s: float
    transfer_s: float
    kernel_s: float

    @property
    def total(self) -> float:
        return self.start_s + self.transfer_s + self.kernel_s


@dataclass(frozen=True)
class Estimate:
    """Seconds each backend would add for one job, beyond what all share (decode, encode, start-up): the host's,
    and each backend with devices' by registry name."""

    host_s: float
    devices: dict[str, DeviceCost]
    rates: Rates
    host_cold_s: float = 0.0  # part of host_s: the CPU kernels this job needs that are not compiled yet
    cold: tuple[str, ...] = ()  # those kernels' modules

    @property
    def seconds(self) -> dict[str, float]:
        """Each candidate backend's seconds, by its registry name, the host first (it wins a tie)."""
        return {registry.HOST: self.host_s, **{kind: cost.total for kind, cost in self.devices.items()}}

    @property
    def faster(self) -> str:
        seconds = self.seconds
        return min(seconds, key=seconds.__getitem__)

    def lines(self) -> list[str]:
        """What --plan prints: every estimate, then the rates they come from."""
        cold = f" (+{self.host_cold_s:.2f} for kernels not compiled yet: {', '.join(self.cold)})" if self.cold else ""
        parts = [f"{registry.kind(registry.HOST).label} {self.host_s:.2f} s{cold}"]
        for kind, c in self.devices.items():
            device = self.rates.device(kind).name or f"a {registry.kind(kind).label}"
            parts.append(f"{device} {c.total:.2f} s (start {c.start_s:.2f} + transfers {c.transfer_s:.2f} + "
                         f"kernels {c.kernel_s:.2f})")
        return [f"estimate: {', '.join(parts)}", f"rates: {self.rates.describe()}"]

    def to_dict(self) -> dict[str, Any]:
        host = registry.HOST
        doc: dict[str, Any] = {f"{host}_s": self.host_s, f"{host}_cold_s": self.host_cold_s,
                               "cold_kernels": list(self.cold)}
        for kind, c in self.devices.items():
            doc.update({f"{kind}_s": c.total, f"{kind}_start_s": c.start_s, f"{kind}_transfer_s": c.transfer_s,
                        f"{kind}_kernel_s": c.kernel_s})
        return {**doc, "faster": self.faster, "rates": self.rates.to_dict()}


@dataclass(frozen=True)
class Work:
    """Float operations of a chain: its colour ops' and its filters' (each kind runs at its own rate)."""

    color: float
    image: float

    @property
    def total(self) -> float:
        return self.color + self.image


def chain_work(ops: Sequence[ColorOp | ImageOp], width: int, height: int, channels: int) -> Work:
    """Float operations of the whole chain, each op at the size it sees."""
    color = image = 0.0
    for op in ops:
        if op.is_identity():
            continue
        if isinstance(op, ImageOp):
            image += op.work(width, height, channels)
            width, height = op.out_size(width, height)
        else:
            color += op.work(width, height, channels)
    return Work(color, image)


def estimate(
    ops: Sequence[ColorOp | ImageOp],
    width: int,
    height: int,
    channels: int,
    bytes_per_sample: int = 2,
    cores: int | None = None,
    rates: Rates | None = None,
    files: int = 1,
    cold: Collection[str] = (),
    compile_s: float | None = None,
    compiling: Collection[str] | None = None,
    held: Collection[str] = (),
    among: Collection[str] | None = None,
) -> Estimate:
    """Each backend's seconds for one image; `bytes_per_sample` as the pixels travel (2 for half); `rates`
    default to this host's (load_rates). A batch of `files` alike pays a device's start once: each image
    carries its share; `held`: the backends whose device this process holds already (a warm service worker),
    nothing. `cold`: the CPU kernel modules not compiled yet, whose ops then cost their stand-ins' slowdown,
    except those `compiling` (default: every cold one where `compile_s` is given), which the job compiles first
    in its own process: `compile_s` seconds more. `among`: the backends with devices to
    weigh (default: every one the rates know)."""
    rates = rates or load_rates()
    cores = cores or usable_cores()
    work = chain_work(ops, width, height, channels)
    now = set(cold if compiling is None and compile_s is not None else compiling or ())
    cold_s = _cold_seconds(ops, width, height, channels, cores, rates.host, set(cold) - now) + (compile_s or 0.0)
    out_w, out_h = chain_size(ops, width, height)
    up = width * height * channels * bytes_per_sample
    down = out_w * out_h * channels * bytes_per_sample
    host = rates.host
    devices = {
        kind: DeviceCost(start_s=0.0 if kind in held else r.extra_start_s / max(1, files),
                         transfer_s=up / r.upload_bps + down / r.download_bps,
                         kernel_s=work.color / r.color_flops + work.image / r.flops)
        for kind, r in rates.devices.items() if among is None or kind in among
    }
    return Estimate(
        host_s=(work.color / host.color_flops_per_core + work.image / host.flops_per_core) / cores + cold_s,
        devices=devices,
        rates=rates,
        host_cold_s=cold_s,
        cold=tuple(sorted(cold)) if cold_s else (),
    )


def _cold_seconds(ops: Sequence[ColorOp | ImageOp], width: int, height: int, channels: int, cores: int,
                  rates: HostRates, cold: set[str]) -> float:
    """The extra time stand-ins take over the kernels' for the ops whose kernels are `cold`, their start
    included."""
    if not cold:
        return 0.0
    from oxi_cli.backends.cpu.cold import module_of

    extra = start = 0.0
    for op in ops:
        if op.is_identity() or module_of(op) not in cold:
            if isinstance(op, ImageOp):
                width, height = op.out_size(width, height)
            continue
        if isinstance(op, ImageOp):
            extra += op.work(width, height, channels) * (COLD_IMAGE_SLOWDOWN - 1) / rates.flops_per_core
            width, height = op.out_size(width, height)
        else:
            extra += op.work(width, height, channels) * (COLD_COLOR_SLOWDOWN - 1) / rates.color_flops_per_core
            start = COLD_COLOR_START_S
    return extra / cores + start


def load_rates(picked: Mapping[str, int] | None = None, any_kind: bool = False) -> Rates:
    """This host's rates from the cache, else the defaults (never raises). Each backend with devices gets those of
    the device `picked` gives it (--device), else of the one `auto` would open (hardware), or with `any_kind` of
    the one that backend forced would (software devices included)."""
    entry, note = cached_entry()
    if entry is None:
        return Rates(note=note)
    try:
        host = entry["host"]
        devices = {}
        for kind in registry.with_devices():
            measured = entry["devices"].get(kind.name) or {"list": [], "auto": None, "any": None}
            index = (picked or {}).get(kind.name, measured["any" if any_kind else "auto"])
            record = next((r for r in measured["list"] if r["index"] == index), None)
            devices[kind.name] = DeviceRates() if record is None else _device_rates(record)
        return Rates(HostRates(_rate(host, "flops_per_core"), _rate(host, "color_flops_per_core")), devices,
                     measured_at=str(entry["measured_at"]))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        return Rates(note=f"the rates cache {rates_file.cache_path()} is damaged ({type(e).__name__}: {e})")


def _device_rates(record: dict[str, Any]) -> DeviceRates:
    return DeviceRates(flops=_rate(record, "flops"), color_flops=_rate(record, "color_flops"),
                       extra_start_s=_rate(record, "extra_start_s", zero=True), upload_bps=_rate(record, "upload_bps"),
                       download_bps=_rate(record, "download_bps"), name=str(record["name"]))


def measured_device(kind: str, index: int) -> dict[str, Any] | None:
    """The cache's record of backend `kind`'s device `index` (its name and driver say which device it was)."""
    entry, _ = cached_entry()
    try:
        listed = (entry or {})["devices"][kind]["list"]
        return next((r for r in listed if r.get("index") == index), None)
    except (KeyError, TypeError, AttributeError):
        return None


def cached_entry() -> tuple[dict[str, Any] | None, str]:
    """This host's entry of the rates cache, read again only when the file changes: keyed by its path, size and
    time, as a warm service worker outlives an `oxi probe --calibrate` that rewrites it (one stat a call)."""
    path = rates_file.cache_path()
    why = rates_file.refusal(path)  # judged at every read: a warm worker outlives a folder's change of hands
    if why:
        return None, why
    try:
        info = os.stat(path)
        stamp: tuple[int, int, int] | None = (info.st_size, info.st_mtime_ns, info.st_ino)
    except OSError:  # missing or unreadable: read_entry says which
        stamp = None
    return _entry_at(str(path), stamp)


@functools.lru_cache(maxsize=4)
def _entry_at(path: str, stamp: tuple[int, int, int] | None) -> tuple[dict[str, Any] | None, str]:
    return rates_file.read_entry(Path(path))


def _rate(record: dict[str, Any], key: str, zero: bool = False) -> float:
    value = record[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{key} is not a number")
    if not (math.isfinite(value) and (value >= 0 if zero else value > 0)):
        raise ValueError(f"{key} = {value}")
    return float(value)
