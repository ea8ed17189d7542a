"""Run a plan: one pass, tiles of an image held in RAM, or bands streamed from EXR to EXR through three threads."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from oxi_cli.backends.base import Backend
from oxi_cli.channels import DEFAULT_LAYERS, EVERYTHING, Group, LayerRule, Selection, select_part
from oxi_cli.errors import OxiError, ProcessingError, UsageError
from oxi_cli.execute import (
    FileSink,
    FileSource,
    MemorySink,
    MemorySource,
    Result,
    clip_counts,
    compute_groups,
    encodes_output,
    execute,
    half_only,
    output_meta,
    output_types,
    part_groups,
    spec_of,
    start_warm_up,
    warn_declared,
    warn_losses,
)
from oxi_cli.image import PIXEL_DTYPES, Image, from_float32, to_float32
from oxi_cli.io.common import ImageSpec, one_line
from oxi_cli.memory import default_ram_budget, parse_bytes
from oxi_cli.ops import ImageOp, Op
from oxi_cli.ops.base import chain_size, live
from oxi_cli.plan import Plan, make_plan
from oxi_cli.spans import AxisSpans, axis_spans, axis_steps, segments

# Told (rows done, rows in all) as output rows complete; may raise KeyboardInterrupt to stop between bands.
RowsDone = Callable[[int, int], None]


class RegionSource(Protocol):
    """Rows of an image on demand; `spec` describes the whole image."""

    spec: ImageSpec
    fresh: bool  # read_rows returns new arrays nobody else holds, so the chain may compute in them

    def read_rows(self, start: int, stop: int) -> dict[str, np.ndarray]: ...


class RegionSink(Protocol):
    def write_rows(self, planes: dict[str, np.ndarray]) -> None: ...


@dataclass
class MemoryRegionSource:
    """An Image served by rows, for tests and for callers that hold pixels already."""

    image: Image
    fresh = False  # bands are views of the caller's image

    @property
    def spec(self) -> ImageSpec:
        return ImageSpec(self.image.width, self.image.height, self.image.channels, self.image.meta)

    def read_rows(self, start: int, stop: int) -> dict[str, np.ndarray]:
        return {name: plane[start:stop] for name, plane in self.image.planes.items()}


class MemoryRegionSink:
    """Collects bands; `image()` joins them."""

    def __init__(self) -> None:
        self.bands: list[dict[str, np.ndarray]] = []

    def write_rows(self, planes: dict[str, np.ndarray]) -> None:
        self.bands.append({name: np.array(plane) for name, plane in planes.items()})

    def planes(self) -> dict[str, np.ndarray]:
        return {name: np.concatenate([b[name] for b in self.bands]) for name in self.bands[0]}


# --- planning from files -----------------------------------------------------------------------------------


def plan_for_files(
    ops: Sequence[Op],
    source_path: str | Path,
    dest_path: str | Path,
    backend: Backend,
    *,
    strategy: str = "auto",
    memory_limit: str | int | None = None,
    vram_limit: str | int | None = None,
    out_type: str = "same",
    selection: Selection = EVERYTHING,
) -> Plan:
    """The plan for `oxi ... IN OUT` with --strategy, --memory-limit and --vram-limit (sizes like 512M)."""
    from oxi_cli.io import format_for, read_spec
    from oxi_cli.io.formats import named

    source_path, dest_path = Path(source_path), Path(dest_path)
    try:
        out_format = format_for(dest_path)
    except OxiError as e:  # for an output, a wrong extension is a usage mistake
        raise UsageError(str(e)) from None
    spec = select_part(read_spec(source_path), selection.part, source_path)
    source = named(spec.meta.format)
    blocker = source.call("region_blocker", source_path) if source.reads_regions else None
    return make_plan(
        spec,
        ops,
        backend.limits(),
        parse_bytes(memory_limit) if memory_limit is not None else default_ram_budget(),
        parse_bytes(vram_limit) if vram_limit is not None else None,
        strategy,
        out_format=out_format,
        out_type=out_type,
        whole_only=blocker,
        selection=selection,
    )


# --- the three-stage pipeline ------------------------------------------------------------------------------

_DONE = object()


class _Pipeline:
    """Decode, compute and encode on three threads joined by one-slot queues, so each band's decode, the
    previous band's compute and the one before's encode overlap (OpenEXR and Numba release the GIL in
    their pixel loops). The first failure in any stage stops all three and is raised on the caller's
    thread; `busy` holds each stage's working seconds."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.busy = {"read": 0.0, "compute": 0.0, "write": 0.0}

    def _fail(self, error: BaseException) -> None:
        self.errors.append(error)
        self.stop.set()

    def _put(self, q: queue.Queue, item: Any) -> bool:
        while not self.stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _get(self, q: queue.Queue) -> Any:
        while True:
            try:
                return q.get(timeout=0.05)
            except queue.Empty:
                if self.stop.is_set():
                    return _DONE

    def _timed(self, stage: str, fn: Callable[..., Any], *args: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.busy[stage] += time.perf_counter() - t

    def run(
        self,
        jobs: Iterable[Any],
        read: Callable[[Any], Any],
        compute: Callable[[Any], Any],
        write: Callable[[Any], None],
    ) -> None:
        decoded: queue.Queue = queue.Queue(maxsize=1)
        encoded: queue.Queue = queue.Queue(maxsize=1)

        def reader() -> None:
            try:
                for job in jobs:
                    if self.stop.is_set() or not self._put(decoded, self._timed("read", read, job)):
                        return
            except BaseException as e:
                self._fail(e)
            finally:
                self._put(decoded, _DONE)

        def writer() -> None:
            try:
                while (item := self._get(encoded)) is not _DONE:
                    self._timed("write", write, item)
            except BaseException as e:
                self._fail(e)

        threads = [
            threading.Thread(target=reader, name="oxi-decode"),
            threading.Thread(target=writer, name="oxi-encode"),
        ]
        for t in threads:
            t.start()
        try:
            while (item := self._get(decoded)) is not _DONE:
                if not self._put(encoded, self._timed("compute", compute, item)):
                    break
            self._put(encoded, _DONE)
        except BaseException as e:  # Ctrl-C included: stop the other stages, then re-raise
            self._fail(e)
        finally:
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(timeout=0.1)
        if self.errors:
            raise self.errors[0]


# --- band and tile maths shared by both region strategies ---------------------------------------------------


def _convert(planes: dict[str, np.ndarray], types: dict[str, str], stored: dict[str, str],
             counts: dict[str, list[int]] | None = None) -> dict[str, np.ndarray]:
    """Channels that pass through untouched, in the output's pixel types; `counts`: add what an integer output
    clips of those converted (execute.clip_counts)."""
    out = {}
    for name, plane in planes.items():
        if types[name] == stored[name]:
            out[name] = plane
            continue
        wide = to_float32(plane, stored[name])
        if counts is not None:
            clip_counts({name: wide}, types, counts)
        out[name] = from_float32(wide, types[name])
    return out


@dataclass
class _JobChain:
    """One job's chain with what every band needs: channel groups, output types, a prepare thread."""

    ops: list[Op]
    groups: list[Group]  # the channel groups computed (channels.Group), the colour layers' first
    types: dict[str, str]
    backend: Backend
    half_input: bool  # every channel of the first group is stored as half
    out_format: str = "exr"

    @property
    def names(self) -> list[str]:
        """Every channel the chain computes on, in kernel order."""
        return [name for group in self.groups for name in group.names]

    def start_prepare(self) -> Callable[[], None]:
        """Load the kernels on a worker thread (as a single pass does while decoding); returns a waiter."""
        if not self.groups:
            return start_warm_up(self.backend, [], 0, False, self.half_input)
        lead = self.groups[0]
        return start_warm_up(self.backend, lead.ops(self.ops), len(lead.names), lead.has_alpha, self.half_input)

    def local_ops(self, rows: AxisSpans, i: int, cols: AxisSpans, j: int) -> list[Op]:
        """The chain for band/tile (i, j): each image op computes that piece's range as the whole-image op
        computes it (ImageOp.piece)."""
        ops, k = [], 0
        for op in self.ops:
            if isinstance(op, ImageOp):
                (y0, y1), (x0, x1) = rows.stages[k][i], cols.stages[k][j]
                (sy, _), (sx, _) = (rows.stages[k - 1][i], cols.stages[k - 1][j]) if k else (
                    rows.read[i], cols.read[j])
                op = op.piece((*rows.sizes[k], int(sy), int(y0), int(y1)), (*cols.sizes[k], int(sx), int(x0), int(x1)))
                k += 1
            ops.append(op)
        return ops

    def region(
        self, region: Image, ops: Sequence[Op], row_crop: tuple[int, int], col_crop: tuple[int, int],
        fresh: bool = False, counts: dict[str, list[int]] | None = None,
    ) -> dict[str, np.ndarray]:
        """Run `ops` on one band or tile; keep rows/cols [start, stop) of its result, in output types.
        `fresh`: nothing else holds the region's planes, so the backend may compute in them; `counts`: add what
        an integer output clips of the kept pixels (execute.clip_counts)."""
        # The single pass's own path (half pixels travel as half when the files are half).
        floats: dict[str, np.ndarray] | None = {} if counts is not None else None
        result = compute_groups(self.backend, region, self.groups, ops, self.types, fresh=fresh, floats=floats)
        rows, cols = slice(*row_crop), slice(*col_crop)
        if floats:
            clip_counts({name: plane[rows, cols] for name, plane in floats.items()}, self.types, counts)
        out = {name: plane[rows, cols] for name, plane in result.items()}
        rest = {name: p for name, p in region.planes.items() if name not in out}
        out.update(_convert(rest, self.types, region.meta.pixel_types, counts))
        return out


def _chain(
    ops: Sequence[Op], spec: ImageSpec, backend: Backend, out_type: str, out_format: str,
    layers: LayerRule = DEFAULT_LAYERS,
) -> _JobChain:
    ops = live(ops)
    groups = part_groups(spec, ops, layers)[0]
    warn_declared(spec, ops)
    types = output_types(Image(spec.width, spec.height, {}, spec.meta), out_type, out_format, ops)
    lead = groups[0].names if groups else ()
    return _JobChain(ops, groups, types, backend, half_only(spec.meta.pixel_types, lead), out_format)


def _spans(ops: Sequence[Op], spec: ImageSpec, plan: Plan) -> tuple[AxisSpans, AxisSpans]:
    """The plan's bands or tiles as row and column spans of this chain on this image."""
    if (spec.width, spec.height) != (plan.width, plan.height):
        raise UsageError(
            f"the plan is for a {plan.width}x{plan.height} image but the input is {spec.width}x{spec.height}; "
            "plan again"
        )
    out_w, out_h = chain_size(ops, spec.width, spec.height)
    rows = axis_spans(
        axis_steps(ops, spec.height, 0), spec.height, *segments(out_h, plan.tile_height)
    )
    cols = axis_spans(
        axis_steps(ops, spec.width, 1), spec.width, *segments(out_w, plan.tile_width)
    )
    return rows, cols


def _crop(spans: AxisSpans, k: int) -> tuple[int, int]:
    start = int(spans.crop[k, 0])
    return start, start + int(spans.out[k, 1] - spans.out[k, 0])


# --- strategies ---------------------------------------------------------------------------------------------


def run_tiled(
    chain: _JobChain, image: Image, rows: AxisSpans, cols: AxisSpans, progress: RowsDone | None = None
) -> Image:
    """Process an in-memory image tile by tile (each tile read with its halo) into a new Image."""
    out_w, out_h = int(cols.out[-1, 1]), int(rows.out[-1, 1])
    planes: dict[str, np.ndarray] = {}
    for name in chain.names:
        planes[name] = np.empty((out_h, out_w), dtype=PIXEL_DTYPES[chain.types[name]])
    counts: dict[str, list[int]] | None = None if encodes_output(chain.ops) else {}
    rest = {name: p for name, p in image.planes.items() if name not in chain.names}
    planes.update(_convert(rest, chain.types, image.meta.pixel_types, counts))
    working = {name: image.planes[name] for name in chain.names}
    for i in range(rows.count):
        (r0, r1), (o0, o1) = rows.read[i], rows.out[i]
        for j in range(cols.count):
            (c0, c1), (p0, p1) = cols.read[j], cols.out[j]
            tile = Image(int(c1 - c0), int(r1 - r0), {n: p[r0:r1, c0:c1] for n, p in working.items()}, image.meta)
            done = chain.region(tile, chain.local_ops(rows, i, cols, j), _crop(rows, i), _crop(cols, j),
                                counts=counts)
            for name in chain.names:
                planes[name][o0:o1, p0:p1] = done[name]
        if progress is not None:
            progress(int(o1), out_h)
    out = Image(out_w, out_h, planes, output_meta(image.meta, chain.ops, image.width, image.height, chain.types))
    warn_losses(out, image.meta.pixel_types, counts or {}, chain.ops, chain.out_format)
    return out


def run_streaming(
    chain: _JobChain,
    source: RegionSource,
    sink: RegionSink,
    rows: AxisSpans,
    cols: AxisSpans,
    progress: RowsDone | None = None,
) -> dict[str, float]:
    """Stream full-width bands from `source` through the chain into `sink`; returns each stage's busy seconds."""
    spec = source.spec
    out_h = int(rows.out[-1, 1])
    wait_prepare = chain.start_prepare()
    prepared = False
    done_rows = 0
    if cols.count != 1:
        raise ProcessingError("streaming bands span the full width")
    full_width = (0, int(cols.out[0, 1]))
    c0, c1 = (int(v) for v in cols.read[0])  # a chain that crops columns reads only those it keeps
    counts: dict[str, list[int]] | None = None if encodes_output(chain.ops) else {}  # an 8/16-bit output's clips

    def read(k: int) -> tuple[int, Image]:
        r0, r1 = (int(v) for v in rows.read[k])
        planes = source.read_rows(r0, r1)
        if (c0, c1) != (0, spec.width):
            planes = {name: plane[:, c0:c1] for name, plane in planes.items()}
        return k, Image(c1 - c0, r1 - r0, planes, spec.meta)

    def compute(item: tuple[int, Image]) -> tuple[int, dict[str, np.ndarray]]:
        nonlocal prepared
        if not prepared:
            wait_prepare()
            prepared = True
        k, band = item
        return k, chain.region(band, chain.local_ops(rows, k, cols, 0), _crop(rows, k), full_width, source.fresh,
                               counts=counts)

    def write(item: tuple[int, dict[str, np.ndarray]]) -> None:
        nonlocal done_rows
        k, planes = item
        sink.write_rows(planes)
        done_rows = int(rows.out[k, 1])
        if progress is not None:
            progress(done_rows, out_h)

    pipeline = _Pipeline()
    try:
        pipeline.run(range(rows.count), read, compute, write)
    finally:
        if not prepared:  # the pipeline failed first: its error is the one to report
            with contextlib.suppress(BaseException):
                wait_prepare()
    if done_rows != out_h:
        raise ProcessingError(f"streaming stopped after {done_rows} of {out_h} rows")
    # What the output lost, said as the single pass says it (an 8/16-bit output's clips, channels it cannot hold).
    meta = output_meta(spec.meta, chain.ops, spec.width, spec.height, chain.types)
    written = {name: np.empty((0, 0), PIXEL_DTYPES[chain.types[name]]) for name in spec.channels}
    warn_losses(Image(full_width[1], out_h, written, meta), spec.meta.pixel_types, counts or {}, chain.ops,
                chain.out_format)
    return pipeline.busy


def run_in_memory(
    ops: Sequence[Op],
    image: Image,
    backend: Backend,
    plan: Plan,
    *,
    out_type: str = "same",
    out_format: str = "exr",
    progress: RowsDone | None = None,
    layers: LayerRule = DEFAULT_LAYERS,
) -> Image:
    """Run `plan` on an Image already in memory (bands come from and go to memory): the planner's maths
    without files, for tests and for callers that hold pixels."""
    spec = spec_of(image)
    if plan.strategy == "single":
        sink = MemorySink(out_format)
        execute(ops, MemorySource(image), sink, backend, out_type=out_type, layers=layers)
        assert sink.image is not None
        return sink.image
    chain = _chain(ops, spec, backend, out_type, out_format, layers)
    rows, cols = _spans(chain.ops, spec, plan)
    if plan.strategy == "tiled":
        wait = chain.start_prepare()
        wait()
        return run_tiled(chain, image, rows, cols, progress)
    collected = MemoryRegionSink()
    run_streaming(chain, MemoryRegionSource(image), collected, rows, cols, progress)
    out_w, out_h = chain_size(chain.ops, image.width, image.height)
    meta = output_meta(image.meta, chain.ops, image.width, image.height, chain.types)
    return Image(out_w, out_h, collected.planes(), meta)


def execute_planned(
    ops: Sequence[Op],
    source_path: str | Path,
    dest_path: str | Path,
    backend: Backend,
    plan: Plan,
    *,
    out_type: str = "same",
    codec: str | None = None,
    in_place: bool = False,
    progress: RowsDone | None = None,
    selection: Selection = EVERYTHING,
) -> Result:
    """Run `ops` from `source_path` to `dest_path` as `plan` says; the same Result as execute.execute().

    `progress(done_rows, total_rows)` is called as output rows complete (from a worker thread when
    streaming). The output is written atomically in every strategy and never replaces the input unless
    `in_place`. `selection`: the part and layers to process (every part, the default layers); `codec`: the
    output's codec setting, already checked for its format (io.output_codec: --compression, or --quality as
    'jpeg:N').
    """
    source_path, dest_path = Path(source_path), Path(dest_path)
    sink = FileSink(dest_path, codec=codec, input_path=source_path, in_place=in_place)
    ops = live(ops)
    if plan.strategy == "single":
        if progress is not None:
            progress(0, plan.out_height)
        source = FileSource(source_path, selection.part)
        result = execute(ops, source, sink, backend, out_type=out_type, layers=selection.layers)
        if progress is not None:
            progress(result.out_height, result.out_height)
        return result
    if plan.strategy == "tiled":
        result = _execute_tiled(ops, source_path, sink, backend, plan, out_type, progress, selection)
        return replace(result, strategy="tiled")
    if plan.strategy == "streaming":
        result = _execute_streaming(ops, source_path, sink, backend, plan, out_type, progress, selection.layers)
        return replace(result, strategy="streaming")
    raise UsageError(f"unknown strategy {plan.strategy!r}; use single, tiled or streaming")


def _execute_tiled(
    ops: list[Op], source_path: Path, sink: FileSink, backend: Backend, plan: Plan, out_type: str,
    progress: RowsDone | None, selection: Selection,
) -> Result:
    t0 = time.perf_counter()
    source = FileSource(source_path, selection.part)
    spec = source.spec()
    chain = _chain(ops, spec, backend, out_type, sink.format, selection.layers)
    rows, cols = _spans(chain.ops, spec, plan)
    wait = chain.start_prepare()
    try:
        image = source.read()
    finally:
        wait()
    t1 = time.perf_counter()
    out = run_tiled(chain, image, rows, cols, progress)
    t2 = time.perf_counter()
    sink.write(out)
    t3 = time.perf_counter()
    return Result(
        backend=backend.name,
        width=image.width,
        height=image.height,
        out_width=out.width,
        out_height=out.height,
        channels=list(chain.names),
        seconds={"read": t1 - t0, "compute": t2 - t1, "write": t3 - t2, "total": t3 - t0},
    )


def _execute_streaming(
    ops: list[Op], source_path: Path, sink: FileSink, backend: Backend, plan: Plan, out_type: str,
    progress: RowsDone | None, layers: LayerRule,
) -> Result:
    from oxi_cli.io import format_for
    from oxi_cli.io.atomic import atomic_output
    from oxi_cli.io.formats import named

    source, dest = named(format_for(source_path)), named(sink.format)
    for fmt, side, can in ((source, "reads", source.reads_regions), (dest, "writes", dest.writes_regions)):
        if not can:
            raise UsageError(f"--strategy streaming {side} files by bands of rows, which {fmt.label} files are "
                             "not; use --strategy auto")
    blocker = source.call("region_blocker", source_path)
    if blocker is not None:
        raise UsageError(f"--strategy streaming cannot run: {blocker}")
    t0 = time.perf_counter()
    with source.call("region_reader", source_path) as reader:
        spec = reader.spec
        chain = _chain(ops, spec, backend, out_type, sink.format, layers)
        rows, cols = _spans(chain.ops, spec, plan)
        out_w, out_h = chain_size(chain.ops, spec.width, spec.height)
        meta = output_meta(spec.meta, chain.ops, spec.width, spec.height, chain.types)
        header = dest.call("band_header", meta, out_w, out_h, sink.codec)
        try:
            with atomic_output(sink.path) as tmp:
                types = {n: chain.types[n] for n in spec.channels}
                writer = dest.call("band_writer", tmp, header, types, sink.path)
                try:
                    busy = run_streaming(chain, reader, writer, rows, cols, progress)
                    writer.close()
                except BaseException:
                    writer.abort()
                    raise
        except (OxiError, MemoryError, KeyboardInterrupt):
            raise
        except OSError as e:
            raise ProcessingError(f"cannot write {sink.path}: {e.strerror or e}") from None
        except Exception as e:
            raise ProcessingError(f"cannot write {sink.path}: {one_line(e)}") from None
    total = time.perf_counter() - t0
    return Result(
        backend=backend.name,
        width=spec.width,
        height=spec.height,
        out_width=out_w,
        out_height=out_h,
        channels=list(chain.names),
        seconds={**busy, "total": total},
    )
