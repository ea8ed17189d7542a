"""Choose single-pass, tiled or streaming execution from the image, the op chain's working set and memory limits.

Every number comes from the chain: each band or tile maps back, op by op, to the input rows and columns it
needs (blur widens by R = ceil(3σ), resize by its filter taps), and the bytes follow from those ranges, the
file's pixel types (I/O buffers) and float32 (working buffers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from oxi_cli.backends.base import DeviceLimits
from oxi_cli.channels import EVERYTHING, Selection
from oxi_cli.errors import UsageError
from oxi_cli.host import cores
from oxi_cli.image import PIXEL_DTYPES, Image
from oxi_cli.io import formats
from oxi_cli.io.common import ImageSpec
from oxi_cli.memory import current_rss, format_size
from oxi_cli.ops import AxisStep, ColorOp, Op
from oxi_cli.ops.base import chain_size, live, ops_for_part, windows_of
from oxi_cli.spans import AxisSpans, axis_spans, axis_steps, segments

STRATEGIES = ("auto", "single", "tiled", "streaming")
# Float32 working set per band beyond which bigger bands buy nothing but memory (the per-band overhead is a
# few milliseconds; 32 MiB is 1024 rows of 2K RGBA or 128 rows of 16K RGBA).
BAND_TARGET_BYTES = 32 << 20
# Bands at least this many times their row halo tall: below it, re-reading and re-computing halo rows costs
# more than a band's own rows.
BAND_HALO_FACTOR = 8
# Stored input + output bytes from which bands beat one pass even when one pass fits (bench/bench_stream.py and
# bench/bench_cpu.py, 2-core x86-64 machine (AVX-512): a 4096x2160 or 4096² RGBA half file runs 6-15 % faster in one
# pass, which reads and writes with the GIL released, an 8192² one 0-8 % faster in bands, in a quarter the memory).
OVERLAP_MIN_BYTES = 512 << 20
# ...but only on hosts of few cores. With 16 (bench/bench_many_core.py on a 16-core host with an H100 GPU,
# 2026-11-23) one pass decodes and encodes on every core and an 8192x4320 job ran 1.16-1.5x faster than in bands.
OVERLAP_MAX_CORES = 4
# Largest tile side tried; at 4096² RGBA float32 a tile is 256 MiB, past the point where GPUs run faster.
MAX_TILE = 4096
MIN_TILE = 16


def runtime_bytes(limits: DeviceLimits) -> int:
    """The process's own resident size: what it holds now, at least what its backend needs loaded."""
    return max(current_rss(), limits.runtime_bytes)


# --- the plan ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """How one job will run, what it should cost, and why; `to_dict()` is what `--plan --json` prints.

    Tile and band sizes are in output pixels: streaming bands are `tile_height` rows of the full width.
    Memory figures are estimated peaks. `ram_bytes` counts the image buffers the job allocates (pixels as
    stored, float32 working copies, and the device's when it computes in RAM); that is what the budget
    bounds. `runtime_bytes` is the fixed rest of the process (interpreter, libraries, compiled kernels,
    GPU staging buffers), so peak RSS is about the sum. `vram_bytes` is the compute device's peak.
    """

    strategy: str  # 'single' | 'tiled' | 'streaming'
    width: int
    height: int
    out_width: int
    out_height: int
    channels: int  # float32 channels the device computes on
    tile_width: int
    tile_height: int
    count: int  # tiles or bands (1 for single)
    read_rows: int  # most input rows one band or tile reads, halo included
    read_cols: int
    read_pixels: int  # input pixels all pieces read together: the image's plus every halo
    ram_bytes: int
    runtime_bytes: int
    vram_bytes: int
    ram_budget: int
    vram_budget: int
    fits: bool
    reason: str
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["notes"] = list(self.notes)
        return d

    def summary(self) -> str:
        """One line: strategy, pieces, memory per device."""
        if self.strategy == "single":
            what = "single pass"
        elif self.strategy == "tiled":
            what = f"{self.count} tile{'s' if self.count != 1 else ''} of {self.tile_width}x{self.tile_height}"
        else:
            what = f"{self.count} band{'s' if self.count != 1 else ''} of {self.tile_height} rows"
        return (
            f"{self.width}x{self.height} -> {self.out_width}x{self.out_height}, {what}; "
            f"RAM {format_size(self.ram_bytes)} of {format_size(self.ram_budget)} "
            f"(+{format_size(self.runtime_bytes)} runtime)"
            + (f", device {format_size(self.vram_bytes)} of {format_size(self.vram_budget)}" if self.vram_bytes else "")
        )


@dataclass(frozen=True)
class _Cost:
    ram: int
    vram: int
    largest_buffer: int
    largest_dim: int
    read_rows: int
    read_cols: int


@dataclass(frozen=True)
class _Costing:
    """What the cost model needs to know about one job, worked out once."""

    spec: ImageSpec
    ops: tuple[Op, ...]
    limits: DeviceLimits
    ram_budget: int
    vram_budget: int
    work_channels: int
    in_bpp: int  # bytes per pixel of every channel as stored in the file
    out_bpp: int  # ... as it will be written
    out_size: tuple[int, int]
    rows: tuple[AxisStep, ...]
    cols: tuple[AxisStep, ...]
    shared: bool  # the device computes in host RAM
    adopts: bool  # the backend's first handle is a host array (CPU backend: the decoded planes or a copy)
    runtime: int
    overhead: int
    tables: int
    other_parts: int = 0  # bytes the file's other parts hold in and out (they are processed in the same pass)

    def cost(self, rows: AxisSpans, cols: AxisSpans, strategy: str) -> _Cost:
        """Peak RAM and device bytes for the largest band or tile of this partition."""
        r, c = rows.lengths(), cols.lengths()
        stage_px = [h * w for h, w in zip(r, c, strict=True)]  # read, then after each spatial op
        out_px = int((rows.out[:, 1] - rows.out[:, 0]).max()) * int((cols.out[:, 1] - cols.out[:, 0]).max())
        f32 = 4 * self.work_channels
        pairs = [stage_px[i] + stage_px[i + 1] for i in range(len(stage_px) - 1)]
        device = f32 * max(pairs or [stage_px[0]]) + self.tables if self.work_channels else 0
        if self.adopts:
            # The CPU backend's first handle is host memory (the decoded planes, or its upload copy) and lives
            # until the chain returns, so every later op's source and destination sit beside it.
            live = [stage_px[0] + stage_px[i + 1] + (stage_px[i] if i else 0) for i in range(len(stage_px) - 1)]
            host_work = f32 * max(live or [stage_px[0]])
        else:
            host_work = f32 * (stage_px[0] + stage_px[-1]) + (device if self.shared else 0)
        in_io = stage_px[0] * self.in_bpp
        out_io = out_px * self.out_bpp
        whole_in = self.spec.width * self.spec.height * self.in_bpp
        whole_out = self.out_size[0] * self.out_size[1] * self.out_bpp
        # Streaming holds two bands decoding (io/exr_chunks.py reads one ahead), one queued and one computing,
        # one computed band queued and two encoding (it starts on a band before the last is written); single
        # and tiled hold the whole input and output planes and one tile's work.
        streaming = strategy == "streaming"
        ram = 4 * in_io + host_work + 3 * out_io if streaming else whole_in + whole_out + host_work + self.other_parts
        dims = max([*r, *c])
        return _Cost(ram, device, f32 * max(stage_px), dims, r[0], c[0])

    def fits(self, cost: _Cost) -> bool:
        return (
            cost.ram <= self.ram_budget
            and cost.vram <= self.vram_budget
            and cost.largest_buffer <= self.limits.max_buffer_bytes
            and cost.largest_dim <= self.limits.max_dim
        )

    def whole(self, axis: int) -> AxisSpans:
        steps, size, out = (self.rows, self.spec.height, self.out_size[1]) if axis == 0 else (
            self.cols, self.spec.width, self.out_size[0])
        return axis_spans(steps, size, np.array([0]), np.array([out]))

    def split(self, axis: int, piece: int) -> AxisSpans:
        steps, size, out = (self.rows, self.spec.height, self.out_size[1]) if axis == 0 else (
            self.cols, self.spec.width, self.out_size[0])
        return axis_spans(steps, size, *segments(out, piece))


def _other_parts_bytes(spec: ImageSpec, ops: Sequence[Op], out_type: str, out_format: str) -> int:
    """What the file's parts after the first hold decoded, computed and written (one pass holds them all)."""
    from oxi_cli.execute import output_types

    total = 0
    for part in spec.parts:
        lead = windows_of(spec.meta, spec.width, spec.height)
        out_w, out_h = chain_size(ops_for_part(ops, lead, windows_of(part.meta, part.width, part.height)),
                                  part.width, part.height)
        types = output_types(Image(part.width, part.height, {}, part.meta), out_type, out_format, ops)
        stored = part.width * part.height * _bytes_per_pixel(part.meta.pixel_types)
        written = out_w * out_h * _bytes_per_pixel(types)
        work = 4 * len(part.channels) * (part.width * part.height + out_w * out_h)
        total += stored + written + work
    return total


def refuse_levels(spec: ImageSpec, top_level_only: bool = False) -> None:
    """A mip- or rip-mapped input would come out with its top level alone: refuse, unless asked for just that,
    rather than drop the other levels unsaid."""
    if top_level_only:
        return
    for i, part in enumerate(spec.all_parts()):
        if part.meta.levels != "one":
            where = f"part {i} of the input" if spec.parts else "the input"
            raise UsageError(
                f"{where} is {part.meta.levels[:3]}-mapped and oxi writes one level: pass --mip-level 0 to process "
                "the top level alone into a one-level file (rebuild the levels with `maketx` or `oiiotool --mipmap`)"
            )


def _bytes_per_pixel(types: dict[str, str]) -> int:
    return sum(PIXEL_DTYPES[t].itemsize for t in types.values())


def _table_bytes(ops: Sequence[Op]) -> int:
    """Device copies of the chain's colour tables (LUTs)."""
    return sum(op.table_bytes() for op in ops if isinstance(op, ColorOp))


def _largest_fitting(fits: Callable[[int], bool], top: int) -> int | None:
    """Largest n in 1..top with fits(n), assuming bigger pieces never need less memory."""
    if top < 1 or not fits(1):
        return None
    if fits(top):
        return top
    lo, hi = 1, top  # fits(lo), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _region_notes(spec: ImageSpec) -> tuple[str, ...]:
    """What streaming this file changes about how it is stored, as its format says (io/formats.py)."""
    fmt = formats.named(spec.meta.format)
    return tuple(fmt.call("band_notes", spec)) if fmt.can("band_notes") else ()


def make_plan(
    spec: ImageSpec,
    ops: Sequence[Op],
    limits: DeviceLimits,
    ram_budget: int,
    vram_budget: int | None = None,
    force: str | None = None,
    *,
    out_format: str = "exr",
    out_type: str = "same",
    whole_only: str | None = None,
    runtime: int | None = None,
    selection: Selection = EVERYTHING,
) -> Plan:
    """Pick (or check a forced) strategy for running `ops` on the image `spec` describes.

    `limits` are the backend's; `vram_budget` overrides its usable memory. `whole_only` is a reason the
    file pair can only be read or written whole (non-EXR, multi-part), which rules streaming out; `runtime` is
    the process's own resident size (default: measured, at least what the backend needs loaded).
    With `force=None` (auto): single pass if it fits, else tiles if the image fits in RAM but not on the
    device, else bands; when nothing fits, the smallest plan comes back with `fits=False`. A forced
    strategy that cannot fit (or cannot run on these files) raises UsageError with the numbers.
    """
    from oxi_cli.execute import output_types, working_channels

    if force in (None, "auto"):
        force = None
    elif force not in STRATEGIES:
        raise UsageError(f"--strategy must be one of {', '.join(STRATEGIES)}, got {force!r}")
    ops = tuple(live(ops))
    refuse_levels(spec, selection.mip_level == 0)
    names = working_channels(spec, ops, selection.layers)
    out_w, out_h = chain_size(ops, spec.width, spec.height)
    types = output_types(Image(spec.width, spec.height, {}, spec.meta), out_type, out_format, ops)
    if spec.parts:
        whole_only = one_pass = f"a multi-part file ({len(spec.all_parts())} parts) is processed in one pass"
    else:
        one_pass = None
    source, dest = formats.named(spec.meta.format), formats.named(out_format)
    if whole_only is None and not source.reads_regions:
        whole_only = f"{source.label} input can only be read whole"
    if whole_only is None and not dest.writes_regions:
        whole_only = f"{dest.label} output can only be written whole"
    job = _Costing(
        spec=spec,
        ops=ops,
        limits=limits,
        ram_budget=int(ram_budget),
        vram_budget=int(vram_budget if vram_budget is not None else limits.usable_memory),
        work_channels=len(names),
        in_bpp=_bytes_per_pixel(spec.meta.pixel_types),
        out_bpp=_bytes_per_pixel(types),
        out_size=(out_w, out_h),
        rows=tuple(axis_steps(ops, spec.height, 0)),
        cols=tuple(axis_steps(ops, spec.width, 1)),
        shared=limits.shares_host_memory,
        adopts=limits.adopts_host_arrays,
        runtime=runtime if runtime is not None else runtime_bytes(limits),
        overhead=limits.host_overhead,
        tables=_table_bytes(ops),
        other_parts=_other_parts_bytes(spec, ops, out_type, out_format),
    )
    planner = _Planner(job, whole_only, one_pass)
    if force is not None:
        return planner.forced(force)
    return planner.auto()


class _Planner:
    def __init__(self, job: _Costing, whole_only: str | None, one_pass: str | None = None) -> None:
        self.job = job
        self.whole_only = whole_only
        self.one_pass = one_pass  # why the file cannot be split into tiles or bands at all
        self.notes = _region_notes(job.spec)

    def _plan(self, strategy: str, rows: AxisSpans, cols: AxisSpans, reason: str, notes: tuple = ()) -> Plan:
        job = self.job
        cost = job.cost(rows, cols, strategy)
        out_w, out_h = job.out_size
        tile_h = int((rows.out[:, 1] - rows.out[:, 0]).max())
        tile_w = int((cols.out[:, 1] - cols.out[:, 0]).max())
        return Plan(
            strategy=strategy,
            width=job.spec.width,
            height=job.spec.height,
            out_width=out_w,
            out_height=out_h,
            channels=job.work_channels,
            tile_width=tile_w,
            tile_height=tile_h,
            count=rows.count * cols.count,
            read_rows=cost.read_rows,
            read_cols=cost.read_cols,
            read_pixels=int((rows.read[:, 1] - rows.read[:, 0]).sum() * (cols.read[:, 1] - cols.read[:, 0]).sum()),
            ram_bytes=cost.ram,
            runtime_bytes=job.runtime + job.overhead,
            vram_bytes=cost.vram,
            ram_budget=job.ram_budget,
            vram_budget=job.vram_budget,
            fits=job.fits(cost),
            reason=reason,
            notes=notes,
        )

    # -- candidates ---------------------------------------------------------------------------------------

    def single(self) -> Plan:
        job = self.job
        return self._plan("single", job.whole(0), job.whole(1), "")

    def _target_rows(self) -> int:
        """Output rows per band that make BAND_TARGET_BYTES of float32 work (input side included), at least
        BAND_HALO_FACTOR times the row halo."""
        job = self.job
        out_w, out_h = job.out_size
        # A shrinking resize reads more than it writes: count the input pixels behind each output row.
        shrink = max(1.0, (job.spec.width * job.spec.height) / max(1, out_w * out_h))
        per_row = max(1, int(out_w * max(job.work_channels, 1) * 4 * shrink))
        halo = sum(s.radius for s in job.rows)
        return max(16, BAND_TARGET_BYTES // per_row, BAND_HALO_FACTOR * halo)

    def bands(self, strategy: str, cap: int | None = None) -> Plan | None:
        """Full-width bands: the tallest that fits, up to the target size; None if not even one row fits."""
        job = self.job
        out_h = job.out_size[1]
        cols = job.whole(1)
        cap = min(out_h, cap or self._target_rows())

        def fits(n: int) -> bool:
            return job.fits(job.cost(job.split(0, n), cols, strategy))

        n = _largest_fitting(fits, cap)
        if n is None:
            return None
        return self._plan(strategy, job.split(0, n), cols, "")

    def squares(self) -> Plan | None:
        """Square tiles (for images too wide for full-width strips): the largest power of two that fits."""
        job = self.job
        side = MAX_TILE
        while side >= MIN_TILE:
            rows, cols = job.split(0, side), job.split(1, side)
            if job.fits(job.cost(rows, cols, "tiled")):
                return self._plan("tiled", rows, cols, "")
            side //= 2
        return None

    def tiles(self) -> Plan | None:
        """Full-width strips or square tiles, whichever reads fewer pixels (halos and resize periods included)."""
        strips = self.bands("tiled", cap=max(1, (MAX_TILE * MAX_TILE) // max(1, self.job.out_size[0])))
        options = [p for p in (strips, self.squares()) if p is not None]
        return min(options, key=lambda p: (p.read_pixels, p.count)) if options else None

    def smallest(self, strategy: str) -> Plan:
        job = self.job
        if strategy == "streaming":
            return self._plan(strategy, job.split(0, 1), job.whole(1), "")
        return self._plan(strategy, job.split(0, MIN_TILE), job.split(1, MIN_TILE), "")

    # -- choices --------------------------------------------------------------------------------------------

    def _overlapped(self) -> Plan | None:
        """Bands even when one pass fits, for big images: decoding, computing and encoding then overlap, as
        fast as one pass or faster in a fraction of the memory (OVERLAP_MIN_BYTES). Only where bands are
        possible and the image makes several of them."""
        job = self.job
        stored = job.spec.width * job.spec.height * job.in_bpp + job.out_size[0] * job.out_size[1] * job.out_bpp
        few_cores = cores() <= OVERLAP_MAX_CORES
        if self.whole_only is not None or stored < OVERLAP_MIN_BYTES or not few_cores:
            return None
        banded = self.bands("streaming")
        if banded is None or banded.count < 2 or not banded.fits:
            return None
        return self._with(
            banded,
            f"the whole image fits, but {banded.count} bands overlap decoding, compute and encoding: "
            f"{self._numbers(banded)}",
            self.notes,
        )

    def _numbers(self, plan: Plan) -> str:
        return f"needs {format_size(plan.ram_bytes)} RAM (budget {format_size(plan.ram_budget)})" + (
            f" and {format_size(plan.vram_bytes)} on the device (budget {format_size(plan.vram_budget)})"
            if plan.vram_bytes else ""
        )

    def _with(self, plan: Plan, reason: str, notes: tuple = ()) -> Plan:
        return Plan(**{**plan.__dict__, "reason": reason, "notes": tuple(notes)})

    def auto(self) -> Plan:
        single = self.single()
        if self.one_pass is not None:
            why = f"the whole file fits: {self._numbers(single)}" if single.fits else (
                f"a single pass {self._numbers(single)}; {self.one_pass}, so it cannot be split: over budget")
            return self._with(single, why)
        if single.fits:
            overlapped = self._overlapped()
            if overlapped is not None:
                return overlapped
            return self._with(single, f"the whole image fits: {self._numbers(single)}")
        why = f"a single pass {self._numbers(single)}"
        if single.ram_bytes <= self.job.ram_budget or self.whole_only is not None:
            tiled = self.tiles()
            if tiled is not None and tiled.fits:
                return self._with(tiled, f"{why}; tiles fit the device")
        if self.whole_only is None:
            streamed = self.bands("streaming")
            if streamed is not None:
                return self._with(streamed, f"{why}; {streamed.count} bands stream through", self.notes)
            least = self.smallest("streaming")
            return self._with(
                least, f"{why}; even 1-row bands need {format_size(least.ram_bytes)}: over budget", self.notes
            )
        tiled = self.tiles()
        best = tiled if tiled is not None else self.smallest("tiled")
        if best.ram_bytes > single.ram_bytes:
            best = single
        return self._with(best, f"{why}; {self.whole_only}, so it cannot stream: over budget")

    def forced(self, strategy: str) -> Plan:
        flag = f"--strategy {strategy}"
        if strategy != "single" and self.one_pass is not None:
            raise UsageError(f"{flag} cannot run: {self.one_pass}; use --strategy single or auto (or --part)")
        if strategy == "single":
            plan = self.single()
            if not plan.fits:
                raise UsageError(f"{flag} {self._numbers(plan)}; raise --memory-limit/--vram-limit or use auto")
            return self._with(plan, f"forced; {self._numbers(plan)}")
        if strategy == "streaming" and self.whole_only is not None:
            raise UsageError(f"{flag} needs EXR input and output read by regions: {self.whole_only}")
        plan = self.tiles() if strategy == "tiled" else self.bands("streaming")
        if plan is None or not plan.fits:
            least = self.smallest(strategy)
            raise UsageError(
                f"{flag}: even the smallest {'tiles' if strategy == 'tiled' else 'bands'} "
                f"{self._numbers(least)}; raise --memory-limit/--vram-limit"
            )
        notes = self.notes if strategy == "streaming" else ()
        pieces = f"{plan.count} piece{'s' if plan.count != 1 else ''}"
        return self._with(plan, f"forced; {pieces}: {self._numbers(plan)}", notes)
