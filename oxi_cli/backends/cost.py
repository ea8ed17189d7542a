"""What a job would cost on the CPU and on a GPU, so `auto` picks the faster one rather than the fancier."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from oxi_cli.ops import ColorOp, ImageOp


@dataclass(frozen=True)
class Rates:
    """How fast each backend works on this kind of host. Defaults measured on the 16-core H100 box
    (bench/bench_many_core.py, 2026-11-23): one pass, 4K and 8K RGBA half, every op.

    `gpu_extra_start_s`: what a GPU job costs beyond the same CPU job before any pixel is computed (opening
    the device and building pipelines, against importing Numba and loading its cached kernels): 0.6-1.7 s
    there, 1.0 typical, for ops whose compute is a few milliseconds on either side. `gpu_transfer_bps`: bytes
    per second up and down (half pixels through mapped staging buffers). `cpu_flops_per_core`: float
    operations per second one core sustains in oxi's kernels (8K blur σ5.25 and σ20, 16 threads).
    """

    cpu_flops_per_core: float = 6e9
    gpu_flops: float = 5e12
    gpu_extra_start_s: float = 1.0
    gpu_transfer_bps: float = 10e9

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Estimate:
    """Seconds each backend would add for one job, beyond what both share (decode, encode, start-up)."""

    cpu_s: float
    gpu_s: float

    @property
    def faster(self) -> str:
        return "gpu" if self.gpu_s < self.cpu_s else "cpu"

    def reason(self) -> str:
        return f"estimated compute: CPU {self.cpu_s:.2f} s, GPU {self.gpu_s:.2f} s (with its start and transfers)"


def chain_work(ops: Sequence[ColorOp | ImageOp], width: int, height: int, channels: int) -> float:
    """Float operations of the whole chain, each op at the size it sees."""
    total = 0.0
    for op in ops:
        if op.is_identity():
            continue
        total += op.work(width, height, channels)
        if isinstance(op, ImageOp):
            width, height = op.out_size(width, height)
    return total


def estimate(
    ops: Sequence[ColorOp | ImageOp],
    width: int,
    height: int,
    channels: int,
    bytes_per_sample: int = 2,
    cores: int | None = None,
    rates: Rates | None = None,
) -> Estimate:
    """CPU vs GPU seconds for one image; `bytes_per_sample` as the pixels travel (2 for half)."""
    rates = rates or Rates()
    cores = cores or os.cpu_count() or 1
    work = chain_work(ops, width, height, channels)
    out_w, out_h = width, height
    for op in ops:
        if isinstance(op, ImageOp):
            out_w, out_h = op.out_size(out_w, out_h)
    moved = (width * height + out_w * out_h) * channels * bytes_per_sample
    cpu = work / (rates.cpu_flops_per_core * cores)
    gpu = rates.gpu_extra_start_s + moved / rates.gpu_transfer_bps + work / rates.gpu_flops
    return Estimate(cpu, gpu)
