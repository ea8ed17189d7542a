"""Run a chain of ops on an image: read from a source, compute on a backend, write to a sink."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from oxi_cli.backends.base import Backend
from oxi_cli.channels import (
    DEFAULT_LAYERS,
    Group,
    LayerRule,
    channel_groups,
    check_named_layers,
    colour_layers,
    select_part,
)
from oxi_cli.errors import UsageError
from oxi_cli.image import Image, ImageMeta, from_float32, to_float32
from oxi_cli.io.common import ImageSpec
from oxi_cli.io.formats import named
from oxi_cli.ops import ColorOp, ImageOp, Op
from oxi_cli.ops.base import chain_colour, chain_size, chain_windows, live, ops_for_part, windows_of

OUT_TYPES = ("same", "half", "float", "uint8", "uint16")


class Source(Protocol):
    fresh: bool  # read() returns an image nobody else holds, so the chain may compute in its planes

    def spec(self) -> ImageSpec:
        """Sizes, channels, pixel types and headers of the parts read() returns, from the headers alone (lets
        kernels load while pixels decode)."""
        ...

    def read(self) -> Image: ...


class Sink(Protocol):
    format: str

    def write(self, image: Image) -> None: ...


class FileSource:
    """A whole image file (every part, or the one `part` names; the planner adds region reads later)."""

    fresh = True

    def __init__(self, path: str | Path, part: str | None = None) -> None:
        self.path = Path(path)
        self.part = part

    def spec(self) -> ImageSpec:
        from oxi_cli.io import read_spec

        return select_part(read_spec(self.path), self.part, self.path)

    def read(self) -> Image:
        from oxi_cli.io import read_image

        return select_part(read_image(self.path), self.part, self.path)


class FileSink:
    """Writes atomically; refuses to replace `input_path` unless `in_place`. `codec`: the output's codec setting,
    checked for its format before the batch began (io.output_codec); None keeps the input's or the format's."""

    def __init__(
        self,
        path: str | Path,
        *,
        codec: str | None = None,
        input_path: str | Path | None = None,
        in_place: bool = False,
    ) -> None:
        from oxi_cli.io.common import output_format

        self.path = Path(path)
        self.input_path = Path(input_path) if input_path is not None else None
        self.in_place = in_place
        # Refused before any work is done, not after minutes of processing.
        self.format = output_format(self.path, self.input_path, in_place)
        self.codec = codec

    def write(self, image: Image) -> None:
        from oxi_cli.io import write_image

        write_image(image, self.path, compression=self.codec, input_path=self.input_path, in_place=self.in_place)


class MemorySource:
    fresh = False  # the caller's image: never computed in

    def __init__(self, image: Image) -> None:
        self.image = image

    def spec(self) -> ImageSpec:
        return spec_of(self.image)

    def read(self) -> Image:
        return self.image


def spec_of(image: Image) -> ImageSpec:
    """What the headers of `image`'s file would say: sizes, channels, types and headers of every part."""
    first, *others = [ImageSpec(p.width, p.height, p.channels, p.meta) for p in image.all_parts()]
    first.parts = others
    return first


class MemorySink:
    def __init__(self, format: str = "exr") -> None:
        self.format = format
        self.image: Image | None = None

    def write(self, image: Image) -> None:
        self.image = image


@dataclass
class Result:
    """What one job did and how long each stage took, for --json and benchmarks."""

    backend: str
    width: int
    height: int
    out_width: int
    out_height: int
    channels: list[str]
    seconds: dict[str, float] = field(default_factory=dict)
    strategy: str = "single"


def part_groups(spec: ImageSpec, ops: Sequence[Op], layers: LayerRule = DEFAULT_LAYERS) -> list[list[Group]]:
    """The channel groups (channels.Group) the chain computes on in each part of the file `spec` describes.

    A part without R, G and B passes a colour op by untouched (a depth or ID part of a multi-part file); a file
    with no such part at all is refused, as is a --layers name the file does not hold.
    """
    parts = spec.all_parts()
    check_named_layers([(p.channels, p.meta.header) for p in parts], layers)
    found = [channel_groups(p.channels, ops, colour_layers(p.channels, p.meta.header, layers)) for p in parts]
    if any(isinstance(op, ColorOp) for op in ops) and not any(g.colour for groups in found for g in groups):
        raise UsageError(f"colour operations need R, G and B channels; this image has {', '.join(spec.channels)}")
    return found


def working_channels(spec: ImageSpec, ops: Sequence[Op], layers: LayerRule = DEFAULT_LAYERS) -> list[str]:
    """Every channel the chain computes on in the first part, in kernel order."""
    return [name for group in part_groups(spec, ops, layers)[0] for name in group.names]


def output_types(image: Image, out_type: str, out_format: str, ops: Sequence[Op] = ()) -> dict[str, str]:
    """Per-channel pixel types for the output: the input's, or --out-type's, or the format's nearest; a review
    frame (`ops` render a display-referred picture into a PNG or JPEG) is 8-bit unless --out-type says otherwise."""
    if out_type not in OUT_TYPES:
        raise UsageError(f"--out-type must be one of {', '.join(OUT_TYPES)}, got {out_type!r}")
    allowed = named(out_format).stores
    target = chain_colour(ops)[1]
    if out_type == "same" and target is not None and target.review(out_format):
        out_type = "uint8"
    types = {}
    for name, kind in image.meta.pixel_types.items():
        want = kind if out_type == "same" else out_type
        if want not in allowed and out_type == "same":
            want = _nearest_type(want, allowed)
        types[name] = want
    return types


def _nearest_type(kind: str, allowed: tuple[str, ...]) -> str:
    prefs = {
        "half": ("half", "float", "uint16", "uint8"),
        "float": ("float", "half", "uint16", "uint8"),
        "uint32": ("uint32", "float", "uint16", "uint8"),
        "uint16": ("uint16", "half", "float", "uint8"),
        "uint8": ("uint8", "half", "uint16", "float"),
    }[kind]
    return next(k for k in prefs if k in allowed)


def output_meta(meta: ImageMeta, ops: Sequence[Op], width: int, height: int, types: dict[str, str]) -> ImageMeta:
    """What the output of `ops` on a width x height image is written with: its pixel types, the data and
    display windows the chain leaves (each image op says how it moves them: ImageOp.windows), and the colour
    space a conversion leaves it in (ColorOp.output_space)."""
    whole = (0, 0, width, height)
    data, display = meta.windows or (whole, whole)
    colour = chain_colour(ops)[1] or meta.colour
    return replace(meta, pixel_types=dict(types), windows=chain_windows(ops, data, display), colour=colour)


def half_only(types: dict[str, str], names: Sequence[str]) -> bool:
    """Whether every named channel is half: then pixels can travel as half (half the bytes to a GPU)."""
    return bool(names) and all(types[n] == "half" for n in names)


def working_planes(image: Image, names: Sequence[str]) -> list[np.ndarray]:
    """The named planes as the chain takes them: half as stored when every one is half, else float32."""
    if half_only(image.meta.pixel_types, names):
        return [image.planes[name] for name in names]
    return [to_float32(image.planes[name], image.meta.pixel_types[name]) for name in names]


def _fused(op: Op) -> bool:
    return isinstance(op, ColorOp) and op.runs_natively()


def _segments(ops: Sequence[Op]) -> list[list[Op]]:
    """Consecutive native colour ops grouped into one segment (fused on the device); each spatial op and
    each host-only colour op alone."""
    segments: list[list[Op]] = []
    for op in ops:
        if _fused(op) and segments and _fused(segments[-1][0]):
            segments[-1].append(op)
        else:
            segments.append([op])
    return segments


def _on_host(backend: Backend, handle: object, op: ColorOp, half: bool, has_alpha: bool) -> object:
    """A colour op no kernel runs: its planes come to the host (the CPU backend's own, in place), the op
    transforms R, G, B there (given alpha too when it reads it and the layer has it) and the result goes back
    as the next handle."""
    planes = backend.download_planes(handle, np.float32)
    op.apply_on_host(planes[:4] if has_alpha and op.touches_alpha() else planes[:3])
    return backend.upload(planes, adopt=True, half=half)


def run_chain(
    backend: Backend,
    planes: Sequence[np.ndarray],
    ops: Sequence[Op],
    has_alpha: bool,
    *,
    adopt: bool = False,
    half_result: bool = False,
) -> object:
    """Upload once and run the chain on the device (colour runs fused); returns the result's handle.
    `adopt`: the planes are the caller's to give away (see Backend.upload); `half_result`: the result will
    be stored as half (see Backend.allocate)."""
    segments = _segments(ops)
    # Half pixels may stay half where nothing but the stored result is ever written into them: a spatial op
    # only reads its source, and a colour run writes in place, so it must be the whole chain.
    only_read = bool(segments) and not isinstance(segments[0][0], ColorOp)
    handle = backend.upload(planes, adopt=adopt, half=only_read or (len(segments) <= 1 and half_result))
    for k, segment in enumerate(segments):
        first = segment[0]
        if isinstance(first, ColorOp) and not first.runs_natively():
            handle = _on_host(backend, handle, first, half_result and k == len(segments) - 1, has_alpha)
        elif isinstance(first, ColorOp):
            backend.color_chain(handle, handle, segment, has_alpha)  # type: ignore[arg-type]
        else:
            h, w, c = handle.shape
            ow, oh = first.out_size(w, h)
            dst = backend.allocate(oh, ow, c, half=half_result and k == len(segments) - 1)
            backend.spatial(handle, dst, first)  # type: ignore[arg-type]
            handle = dst
    return handle


# Formats storing integers only (or usually: TIFF), where float pixels are clipped to 0..1 and quantised.
INTEGER_TYPES = ("uint8", "uint16")
_warned: set[str] = set()


def clip_counts(floats: Mapping[str, np.ndarray], types: Mapping[str, str],
                counts: dict[str, list[int]] | None = None) -> dict[str, list[int]]:
    """Per channel written as an integer: [values its encoding clips, values], added to `counts` (pieces of one
    image add up). Clipped: NaN, or more than half a code value outside 0..1 (less only rounds)."""
    counts = {} if counts is None else counts
    for name, plane in floats.items():
        kind = types.get(name)
        if kind not in INTEGER_TYPES:
            continue
        margin = np.float32(0.5 / (255.0 if kind == "uint8" else 65535.0))
        with np.errstate(invalid="ignore"):
            inside = int(np.count_nonzero((plane >= -margin) & (plane <= 1 + margin)))
        found = counts.setdefault(name, [0, 0])
        found[0] += plane.size - inside
        found[1] += plane.size
    return counts


def _share(counts: Mapping[str, list[int]], names: Sequence[str]) -> str:
    """How much of the named channels' values clipped, as a percentage a user reads (never 0.0% for some)."""
    out, total = sum(counts[n][0] for n in names), sum(counts[n][1] for n in names)
    pct = 100.0 * out / total if total else 0.0
    return "under 0.1%" if 0 < pct < 0.05 else f"{pct:.1f}%"


def encodes_output(ops: Sequence[Op]) -> bool:
    """Whether a colour conversion in the chain encodes the values for the output (ColorOp.encodes_output)."""
    return any(getattr(op, "encodes_output", False) for op in ops)


def clipping_note(stored: Mapping[str, str], types: Mapping[str, str], counts: Mapping[str, list[int]],
                  ops: Sequence[Op], out_format: str) -> str | None:
    """The warning line for values an integer output clips, with no colour conversion in the chain (its values
    are meant for the encoding): float pixels written as integers at all (scene-linear in an 8/16-bit file),
    or integer pixels a colour op pushed outside 0..1 (a resize's ringing is clipped as every resizer does)."""
    if not counts or encodes_output(ops):
        return None
    label = f"{types[next(iter(counts))]} {out_format.upper()}"
    floats = [n for n in counts if stored.get(n) in ("half", "float")]
    if floats:
        return (f"float pixels written as {label} with no colour conversion: {_share(counts, floats)} of values "
                f"clipped to 0..1; encode them with --colorspace FROM:TO or --display FROM:DISPLAY:VIEW in "
                f"`oxi run`, or `oxi colorspace` / `oxi display`")
    graded = [n for n in counts if stored.get(n) in INTEGER_TYPES]
    if not any(counts[n][0] for n in graded) or not any(isinstance(op, ColorOp) for op in ops):
        return None
    return (f"the grade takes {_share(counts, graded)} of values outside 0..1, which the {label} output clips; "
            f"write float to keep them (an .exr output, or --out-type float for a .tif), or grade less")


def dropped_note(image: Image, types: Mapping[str, str], out_format: str) -> str | None:
    """The warning line for channels the output format cannot hold (alpha in a JPEG, other layers in a PNG, TIFF
    or JPEG); a review frame drops them by design (colour_tags.ColourTag.review)."""
    kept = kept_channels(image, types, out_format)
    dropped = [n for n in image.planes if n not in kept]
    if not dropped or (image.meta.colour is not None and image.meta.colour.review(out_format)):
        return None
    keep = "a PNG, TIFF or EXR output keeps alpha" if dropped == ["A"] else "an EXR output keeps every channel"
    return (f"a {out_format.upper()} file holds {', '.join(kept)}: channels {', '.join(dropped)} are not written; "
            f"{keep}")


def kept_channels(image: Image, types: Mapping[str, str], out_format: str) -> list[str]:
    """The channels the output format writes of `image` stored as `types` (EXR: every one)."""
    from oxi_cli.io.raster import output_layout

    if named(out_format).any_channels:
        return list(image.planes)
    try:
        kept, _ = output_layout(Image(image.width, image.height, image.planes, replace(image.meta, pixel_types=dict(
            types))), out_format)
    except UsageError:  # the writer refuses an unwritable layout itself, in one line
        return list(image.planes)
    return kept


def warn_losses(output: Image, stored: Mapping[str, str], counts: Mapping[str, list[int]], ops: Sequence[Op],
                out_format: str) -> None:
    """Say once per run what an output loses: clipped values (clip_counts of its channels) and channels its
    format cannot hold. `output`: the image written (its types, and the colour tag the chain left); `stored`:
    the input's pixel types."""
    types = output.meta.pixel_types
    kept = kept_channels(output, types, out_format)
    written = {n: c for n, c in counts.items() if n in kept}
    _warn_once("clipping", clipping_note(stored, types, written, ops, out_format))
    _warn_once("dropped", dropped_note(output, types, out_format))


def declared_note(spec: ImageSpec, ops: Sequence[Op]) -> str | None:
    """The warning line for a file whose colour attributes (colorInteropID, oiio:ColorSpace, chromaticities...)
    name another space than the one the chain's first conversion takes (its --from)."""
    from oxi_cli.colour_tags import declared, disagrees

    source = chain_colour(ops)[0]
    if source is None:
        return None
    for part in spec.all_parts():
        found = declared(part.meta.header)
        if found is not None and disagrees(found, source):
            return (f"the input declares {found.value} ({found.attribute}) but the conversion takes it as "
                    f"{source.name}; check --from (the pixels were converted as {source.name})")
    return None


def warn_declared(spec: ImageSpec, ops: Sequence[Op]) -> None:
    _warn_once("declared", declared_note(spec, ops))


def reset_warnings() -> None:
    """Forget which warnings were said (a long-lived process runs many commands, each warned once)."""
    _warned.clear()


def _warn_once(key: str, message: str | None) -> None:
    if message and key not in _warned:
        _warned.add(key)
        import sys

        print(f"oxi: warning: {message}", file=sys.stderr)


def compute(
    backend: Backend,
    image: Image,
    names: Sequence[str],
    ops: Sequence[Op],
    has_alpha: bool,
    types: dict[str, str],
    *,
    fresh: bool = False,
    floats: dict[str, np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Run the chain on `image`'s working channels; one output plane per name, in its output type (half in
    and half out when the files are half). `fresh`: nothing else holds the image's planes, so the backend
    may compute in them (they then hold the result). `floats` receives the computed planes before they are
    converted to the output type."""
    half_out = half_only(types, names)
    handle = run_chain(backend, working_planes(image, names), ops, has_alpha, adopt=fresh, half_result=half_out)
    planes = backend.download_planes(handle, np.float16 if half_out else np.float32)
    if floats is not None:
        floats.update(zip(names, planes, strict=True))
    return [plane if half_out else from_float32(plane, types[name]) for plane, name in zip(planes, names, strict=True)]


def compute_groups(
    backend: Backend,
    image: Image,
    groups: Sequence[Group],
    ops: Sequence[Op],
    types: dict[str, str],
    *,
    fresh: bool = False,
    floats: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """compute() for each channel group of one part (its colour layers, the rest): name -> output plane."""
    out: dict[str, np.ndarray] = {}
    for group in groups:
        planes = compute(backend, image, group.names, group.ops(ops), group.has_alpha, types, fresh=fresh,
                         floats=floats)
        out.update(zip(group.names, planes, strict=True))
    return out


def warm_up(backend: Backend, ops: Sequence[Op], channels: int, has_alpha: bool, half_input: bool) -> None:
    """Run the chain once on a 2x2 image of the element type the job will see: kernels load from the cache
    (or compile), pipelines build and tables upload before the real pixels arrive."""
    dtype = np.float16 if half_input else np.float32
    tiny = [op.sample() if isinstance(op, ImageOp) else op for op in ops]
    planes = [np.ones((2, 2), dtype) for _ in range(channels)]
    handle = run_chain(backend, planes, tiny, has_alpha, adopt=True, half_result=half_input)
    backend.download_planes(handle, dtype)


def start_warm_up(
    backend: Backend, ops: Sequence[Op], channels: int, has_alpha: bool, half_input: bool
) -> Callable[[], None]:
    """warm_up on a worker thread, to overlap decoding; returns the wait, which re-raises its failure."""
    failure: list[BaseException] = []

    def work() -> None:
        try:
            if ops and channels:
                warm_up(backend, ops, channels, has_alpha, half_input)
        except BaseException as e:  # re-raised on the calling thread
            failure.append(e)

    worker = threading.Thread(target=work, name="oxi-prepare", daemon=True)
    worker.start()

    def wait() -> None:
        worker.join()
        if failure:
            raise failure[0]

    return wait


def read_while_preparing(
    source: Source, backend: Backend, ops: Sequence[Op], channels: int, has_alpha: bool, half_input: bool
) -> Image:
    """Decode the input while the backend loads its kernels: both take a good part of a short job."""
    wait = start_warm_up(backend, ops, channels, has_alpha, half_input)
    try:
        return source.read()
    finally:
        wait()


def execute(
    ops: Sequence[Op],
    source: Source,
    sink: Sink,
    backend: Backend,
    *,
    out_type: str = "same",
    layers: LayerRule = DEFAULT_LAYERS,
) -> Result:
    """Single-pass execution: the whole file in memory, every part of it through the chain."""
    ops = live(ops)
    t0 = time.perf_counter()
    spec = source.spec()
    groups = part_groups(spec, ops, layers)
    warn_declared(spec, ops)
    lead = groups[0][0] if groups[0] else Group((), False, True)
    half = half_only(spec.meta.pixel_types, lead.names)
    image = read_while_preparing(source, backend, lead.ops(ops), len(lead.names), lead.has_alpha, half)
    t1 = time.perf_counter()
    lead_windows = windows_of(image.meta, image.width, image.height)
    first, *others = [
        process_part(backend, part, ops_for_part(ops, lead_windows, windows_of(part.meta, part.width, part.height)),
                     part_groups_, out_type,
                     sink.format, fresh=source.fresh)
        for part, part_groups_ in zip(image.all_parts(), groups, strict=True)
    ]
    first.parts = others
    t2 = time.perf_counter()
    sink.write(first)
    t3 = time.perf_counter()
    return Result(
        backend=backend.name,
        width=image.width,
        height=image.height,
        out_width=first.width,
        out_height=first.height,
        channels=[name for group in groups[0] for name in group.names],
        seconds={"read": t1 - t0, "compute": t2 - t1, "write": t3 - t2, "total": t3 - t0},
    )


def process_part(
    backend: Backend,
    image: Image,
    ops: Sequence[Op],
    groups: Sequence[Group],
    out_type: str,
    out_format: str,
    *,
    fresh: bool = False,
) -> Image:
    """One part through the chain: its groups computed, the other channels passed through (converted only
    where the output's pixel type differs), windows moved as the chain's image ops say."""
    types = output_types(image, out_type, out_format, ops)
    floats: dict[str, np.ndarray] = {}
    out = compute_groups(backend, image, groups, ops, types, fresh=fresh, floats=floats)
    planes: dict[str, np.ndarray] = {}
    for name, plane in image.planes.items():
        if name in out:
            planes[name] = out[name]
        elif types[name] != image.meta.pixel_types[name]:
            floats[name] = to_float32(plane, image.meta.pixel_types[name])
            planes[name] = from_float32(floats[name], types[name])
        else:
            planes[name] = plane
    computed = [group.ops(ops) for group in groups]
    chain = max(computed, key=len) if computed else []
    width, height = chain_size(chain, image.width, image.height)
    result = Image(width, height, planes, output_meta(image.meta, chain, image.width, image.height, types))
    counts = {} if encodes_output(ops) else clip_counts(floats, types)
    warn_losses(result, image.meta.pixel_types, counts, ops, out_format)
    return result
