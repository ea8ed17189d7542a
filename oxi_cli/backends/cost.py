"""What a job would cost on the CPU and on a GPU, so `auto` picks the faster one rather than the fancier."""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from oxi_cli.backends import rates_file
from oxi_cli.ops import ColorOp, ImageOp

DEFAULTS_FROM = "a 16-core host with an H100 GPU (bench/bench_many_core.py, 2026-11-23)"
# How many times a core's time a job's ops take on the CPU while their kernels are not compiled (the stand-ins:
# OpenColorIO's CPU processor for colour ops, 3-8x; NumPy for image ops, 4-5x; 2048x2048 RGBA half, one thread, a
# 2-core x86-64 machine (AVX-512), 2026-11-28), and with OXI_WAIT_FOR_KERNELS=1 the seconds their compile takes
# instead.
COLD_COLOR_SLOWDOWN = 4.0
COLD_IMAGE_SLOWDOWN = 5.0


@dataclass(frozen=True)
class Rates:
    """How fast each backend works on this host: measured by `oxi probe --calibrate` (backends/calibrate.py)
    and cached, else defaults measured on a 16-core host with an H100 GPU (bench/bench_many_core.py, 2026-11-23: one
    pass, 4K and 8K RGBA half, every op).

    `gpu_extra_start_s`: what a GPU job costs beyond the same CPU job before any pixel is computed (importing
    wgpu, listing adapters, opening the device and building pipelines, against importing Numba and loading its
    cached kernels): 0.6-1.7 s there in whole jobs, 1.0 typical (calibration's start-up alone measures
    0.34-0.55 s: in a job the device opening also slows the decoding beside it). `gpu_upload_bps`/
    `gpu_download_bps`: bytes per second each way, host interleave and half conversion included (calibrated
    there: 1.2-2.7 and 1.1-2.0 GB/s). `cpu_flops_per_core`: float operations per second
    one core sustains in oxi's filters (8K blur σ5.25 and σ20, 16 threads); `cpu_color_flops_per_core`: in
    its colour ops, whose pows and table reads cost 3-6x a filter's multiply-add per counted operation (8K
    CDL: 0.10 s of compute on 16 cores). `gpu_flops`, `gpu_color_flops`: the device's, likewise (calibrated
    there: 1.45-1.63 and 0.63-0.69 TFLOP/s).

    `measured_at` is empty for defaults; `gpu_name` names the adapter whose rates these are (empty: defaults);
    `note` says why the cache was not used.
    """

    cpu_flops_per_core: float = 6e9
    cpu_color_flops_per_core: float = 1.75e9
    gpu_flops: float = 1.5e12
    gpu_color_flops: float = 0.65e12
    gpu_extra_start_s: float = 1.0
    gpu_upload_bps: float = 2e9
    gpu_download_bps: float = 1.5e9
    measured_at: str = ""
    gpu_name: str = ""
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "source": "measured" if self.measured_at else "defaults"}

    def describe(self) -> str:
        """One line for --plan and probe: where the rates come from."""
        if not self.measured_at:
            return f"defaults from {DEFAULTS_FROM} ({self.note or 'not this host'}: run `oxi probe --calibrate`)"
        gpu = f"GPU {self.gpu_name}" if self.gpu_name else "GPU: defaults, that GPU was not measured"
        return f"measured on this host {self.measured_at} (CPU; {gpu})"


@dataclass(frozen=True)
class Estimate:
    """Seconds each backend would add for one job, beyond what both share (decode, encode, start-up)."""

    cpu_s: float
    gpu_start_s: float
    gpu_transfer_s: float
    gpu_kernel_s: float
    rates: Rates
    cpu_cold_s: float = 0.0  # part of cpu_s: the CPU kernels this job needs that are not compiled yet
    cold: tuple[str, ...] = ()  # those kernels' modules

    @property
    def gpu_s(self) -> float:
        return self.gpu_start_s + self.gpu_transfer_s + self.gpu_kernel_s

    @property
    def seconds(self) -> dict[str, float]:
        """Each candidate backend's seconds, by its registry name, the host first (it wins a tie)."""
        return {"cpu": self.cpu_s, "gpu": self.gpu_s}

    @property
    def faster(self) -> str:
        seconds = self.seconds
        return min(seconds, key=seconds.__getitem__)

    def lines(self) -> list[str]:
        """What --plan prints: both estimates, then the rates they come from."""
        gpu = self.rates.gpu_name or "a GPU"
        cold = f" (+{self.cpu_cold_s:.2f} for kernels not compiled yet: {', '.join(self.cold)})" if self.cold else ""
        return [f"estimate: CPU {self.cpu_s:.2f} s{cold}, {gpu} {self.gpu_s:.2f} s (start {self.gpu_start_s:.2f} + "
                f"transfers {self.gpu_transfer_s:.2f} + kernels {self.gpu_kernel_s:.2f})",
                f"rates: {self.rates.describe()}"]

    def to_dict(self) -> dict[str, Any]:
        return {"cpu_s": self.cpu_s, "cpu_cold_s": self.cpu_cold_s, "cold_kernels": list(self.cold),
                "gpu_s": self.gpu_s, "gpu_start_s": self.gpu_start_s,
                "gpu_transfer_s": self.gpu_transfer_s, "gpu_kernel_s": self.gpu_kernel_s, "faster": self.faster,
                "rates": self.rates.to_dict()}


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
    gpu_open: bool = False,
) -> Estimate:
    """CPU vs GPU seconds for one image; `bytes_per_sample` as the pixels travel (2 for half); `rates`
    default to this host's (load_rates). A batch of `files` alike pays the GPU's start once: each image
    carries its share; `gpu_open`: this process holds the device already (a warm service worker), nothing.
    `cold`: the CPU kernel modules not compiled yet, whose ops then cost their stand-ins' slowdown, or with
    `compile_s` (a job that waits for them) that many seconds more."""
    rates = rates or load_rates()
    cores = cores or os.cpu_count() or 1
    work = chain_work(ops, width, height, channels)
    cold_s = _cold_seconds(ops, width, height, channels, cores, rates, set(cold), compile_s)
    out_w, out_h = width, height
    for op in ops:
        if isinstance(op, ImageOp):
            out_w, out_h = op.out_size(out_w, out_h)
    up = width * height * channels * bytes_per_sample
    down = out_w * out_h * channels * bytes_per_sample
    return Estimate(
        cpu_s=(work.color / rates.cpu_color_flops_per_core + work.image / rates.cpu_flops_per_core) / cores + cold_s,
        gpu_start_s=0.0 if gpu_open else rates.gpu_extra_start_s / max(1, files),
        gpu_transfer_s=up / rates.gpu_upload_bps + down / rates.gpu_download_bps,
        gpu_kernel_s=work.color / rates.gpu_color_flops + work.image / rates.gpu_flops,
        rates=rates,
        cpu_cold_s=cold_s,
        cold=tuple(sorted(cold)) if cold_s else (),
    )


def _cold_seconds(ops: Sequence[ColorOp | ImageOp], width: int, height: int, channels: int, cores: int,
                  rates: Rates, cold: set[str], compile_s: float | None) -> float:
    """What kernels not compiled yet add to the CPU's seconds: the compile when the job waits for it, else the
    extra time the stand-ins take over the kernels' for the ops whose kernels are cold."""
    if not cold:
        return 0.0
    if compile_s is not None:
        return compile_s
    from oxi_cli.backends.cpu.cold import module_of

    extra = 0.0
    for op in ops:
        if op.is_identity() or module_of(op) not in cold:
            if isinstance(op, ImageOp):
                width, height = op.out_size(width, height)
            continue
        if isinstance(op, ImageOp):
            extra += op.work(width, height, channels) * (COLD_IMAGE_SLOWDOWN - 1) / rates.cpu_flops_per_core
            width, height = op.out_size(width, height)
        else:
            extra += op.work(width, height, channels) * (COLD_COLOR_SLOWDOWN - 1) / rates.cpu_color_flops_per_core
    return extra / cores


def load_rates(device: int | None = None, any_kind: bool = False) -> Rates:
    """This host's rates from the cache, else the defaults (never raises). The GPU's are those of adapter
    `device`, else of the adapter `auto` would open (a hardware GPU), or with `any_kind` of the one
    `--backend gpu` would (software adapters included)."""
    entry, note = cached_entry()
    if entry is None:
        return Rates(note=note)
    try:
        cpu = entry["cpu"]
        rates = Rates(cpu_flops_per_core=_rate(cpu, "flops_per_core"),
                      cpu_color_flops_per_core=_rate(cpu, "color_flops_per_core"),
                      measured_at=str(entry["measured_at"]))
        index = device if device is not None else entry["gpu_adapter" if any_kind else "auto_adapter"]
        adapter = next((a for a in entry["adapters"] if a["index"] == index), None)
        if adapter is None:
            return rates
        return replace(
            rates,
            gpu_flops=_rate(adapter, "flops"),
            gpu_color_flops=_rate(adapter, "color_flops"),
            gpu_extra_start_s=_rate(adapter, "extra_start_s", zero=True),
            gpu_upload_bps=_rate(adapter, "upload_bps"),
            gpu_download_bps=_rate(adapter, "download_bps"),
            gpu_name=str(adapter["name"]),
        )
    except (KeyError, TypeError, ValueError) as e:
        return Rates(note=f"the rates cache {rates_file.cache_path()} is damaged ({type(e).__name__}: {e})")


def cached_entry() -> tuple[dict[str, Any] | None, str]:
    """This host's entry of the rates cache, read again only when the file changes: keyed by its path, size and
    time, as a warm service worker outlives an `oxi probe --calibrate` that rewrites it (one stat a call)."""
    path = rates_file.cache_path()
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
