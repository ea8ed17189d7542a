"""Run a chain of ops on an image: read from a source, compute on a backend, write to a sink."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from oxi_cli.backends.base import Backend
from oxi_cli.errors import UsageError
from oxi_cli.image import COLOR_CHANNELS, Image, from_float32, to_float32
from oxi_cli.ops import ColorOp, ImageOp, Matrix, Op

OUT_TYPES = ("same", "half", "float", "uint8", "uint16")
# What each output format can store, best first; used when --out-type same meets a format that can't.
FORMAT_TYPES: dict[str, tuple[str, ...]] = {
    "exr": ("half", "float", "uint32"),
    "png": ("uint16", "uint8"),
    "tiff": ("float", "uint16", "uint8"),
    "jpeg": ("uint8",),
}


class Source(Protocol):
    def channels(self) -> list[str]:
        """Channel names, from the header alone (lets kernels load while pixels decode)."""
        ...

    def read(self) -> Image: ...


class Sink(Protocol):
    format: str

    def write(self, image: Image) -> None: ...


class FileSource:
    """A whole image file (the planner adds region reads later)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def channels(self) -> list[str]:
        from oxi_cli.io import read_spec

        return list(read_spec(self.path).channels)

    def read(self) -> Image:
        from oxi_cli.io import read_image

        return read_image(self.path)


class FileSink:
    """Writes atomically; refuses to replace `input_path` unless `in_place`."""

    def __init__(
        self,
        path: str | Path,
        *,
        compression: str | None = None,
        input_path: str | Path | None = None,
        in_place: bool = False,
    ) -> None:
        from oxi_cli.errors import InputError, UsageError
        from oxi_cli.io import format_for
        from oxi_cli.io.atomic import refuse_input_overwrite

        self.path = Path(path)
        try:
            self.format = format_for(self.path)
        except InputError as e:  # for an output, a wrong extension is a usage mistake
            raise UsageError(str(e)) from None
        self.compression = compression
        self.input_path = Path(input_path) if input_path is not None else None
        self.in_place = in_place
        # Refuse before any work is done, not after minutes of processing.
        if self.input_path is not None:
            refuse_input_overwrite(self.path, self.input_path, in_place)

    def write(self, image: Image) -> None:
        from oxi_cli.io import write_image

        write_image(
            image, self.path, compression=self.compression, input_path=self.input_path, in_place=self.in_place
        )


class MemorySource:
    def __init__(self, image: Image) -> None:
        self.image = image

    def channels(self) -> list[str]:
        return self.image.channels

    def read(self) -> Image:
        return self.image


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


def working_channels(channels: Sequence[str], ops: Sequence[Op]) -> tuple[list[str], bool]:
    """Channels the chain must compute on, in kernel order (R, G, B, A first), and whether [3] is alpha.

    Colour-only chains leave every other channel untouched (not even converted); spatial ops need all.
    """
    if not ops:
        return [], False
    needs_color = any(isinstance(op, ColorOp) for op in ops)
    if needs_color and not all(c in channels for c in COLOR_CHANNELS):
        raise UsageError(f"colour operations need R, G and B channels; this image has {', '.join(channels)}")
    alpha = "A" in channels
    if any(isinstance(op, ImageOp) for op in ops):
        lead = [*COLOR_CHANNELS, "A"] if needs_color and alpha else list(COLOR_CHANNELS) if needs_color else []
        return lead + [c for c in channels if c not in lead], needs_color and alpha
    wants_alpha = alpha and any(isinstance(op, Matrix) and op.touches_alpha() for op in ops)
    return [*COLOR_CHANNELS, "A"] if wants_alpha else list(COLOR_CHANNELS), wants_alpha


def output_types(image: Image, out_type: str, out_format: str) -> dict[str, str]:
    """Per-channel pixel types for the output: the input's, or --out-type's, or the format's nearest."""
    if out_type not in OUT_TYPES:
        raise UsageError(f"--out-type must be one of {', '.join(OUT_TYPES)}, got {out_type!r}")
    allowed = FORMAT_TYPES.get(out_format, ("half", "float", "uint32", "uint8", "uint16"))
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


def half_only(types: dict[str, str], names: Sequence[str]) -> bool:
    """Whether every named channel is half: then pixels can travel as half (half the bytes to a GPU)."""
    return bool(names) and all(types[n] == "half" for n in names)


def gather(image: Image, names: Sequence[str], dtype: np.dtype | type = np.float32) -> np.ndarray:
    """Interleave the named planes into one (H, W, C) working array: float32, or float16 for half planes."""
    work = np.empty((image.height, image.width, len(names)), dtype=dtype)
    for i, name in enumerate(names):
        plane = image.planes[name]
        work[..., i] = plane if work.dtype == np.float16 else to_float32(plane, image.meta.pixel_types[name])
    return work


def _segments(ops: Sequence[Op]) -> list[list[Op]]:
    """Consecutive colour ops grouped into one segment (fused on the device); each spatial op alone."""
    segments: list[list[Op]] = []
    for op in ops:
        if isinstance(op, ColorOp) and segments and isinstance(segments[-1][0], ColorOp):
            segments[-1].append(op)
        else:
            segments.append([op])
    return segments


def run_chain(
    backend: Backend, work: np.ndarray, ops: Sequence[Op], has_alpha: bool, out: np.ndarray | None = None
) -> np.ndarray:
    """Upload once, run the chain on the device (colour runs fused), download once (into `out` if given)."""
    handle = backend.upload(work)
    for segment in _segments(ops):
        first = segment[0]
        if isinstance(first, ColorOp):
            backend.color_chain(handle, handle, segment, has_alpha)  # type: ignore[arg-type]
        else:
            h, w, c = handle.shape
            ow, oh = first.out_size(w, h)
            dst = backend.allocate(oh, ow, c)
            first.dispatch(backend, handle, dst)
            handle = dst
    if out is not None and out.shape != tuple(handle.shape):
        raise ValueError(f"download target is {out.shape}, the result is {tuple(handle.shape)}")
    return backend.download(handle, out)


def compute(
    backend: Backend, image: Image, names: Sequence[str], ops: Sequence[Op], has_alpha: bool, types: dict[str, str]
) -> np.ndarray:
    """Run the chain on `image`'s working channels; half in and half out when the files are half."""
    source_half = half_only(image.meta.pixel_types, names)
    work = gather(image, names, np.float16 if source_half else np.float32)
    out = None
    if half_only(types, names):
        w, h = image.width, image.height
        for op in ops:
            w, h = op.out_size(w, h) if isinstance(op, ImageOp) else (w, h)
        out = np.empty((h, w, len(names)), dtype=np.float16)
    return run_chain(backend, work, ops, has_alpha, out)


def read_while_preparing(
    source: Source, backend: Backend, ops: Sequence[Op], channels: int, has_alpha: bool
) -> Image:
    """Decode the input while the backend loads its kernels: both take a good part of a short job."""
    if not ops:
        return source.read()
    failure: list[BaseException] = []

    def prepare() -> None:
        try:
            backend.prepare(ops, channels, has_alpha)
        except BaseException as e:  # re-raised on the calling thread
            failure.append(e)

    worker = threading.Thread(target=prepare, name="oxi-prepare", daemon=True)
    worker.start()
    try:
        return source.read()
    finally:
        worker.join()
        if failure:
            raise failure[0]


def execute(
    ops: Sequence[Op],
    source: Source,
    sink: Sink,
    backend: Backend,
    *,
    out_type: str = "same",
) -> Result:
    """Single-pass execution: the whole image in memory."""
    ops = [op for op in ops if not op.is_identity()]
    t0 = time.perf_counter()
    names, has_alpha = working_channels(source.channels(), ops)
    image = read_while_preparing(source, backend, ops, len(names), has_alpha)
    t1 = time.perf_counter()
    types = output_types(image, out_type, sink.format)
    out = compute(backend, image, names, ops, has_alpha, types) if names else None
    t2 = time.perf_counter()
    planes: dict[str, np.ndarray] = {}
    for name, plane in image.planes.items():
        if out is not None and name in names:
            planes[name] = from_float32(out[..., names.index(name)], types[name])
        elif types[name] != image.meta.pixel_types[name]:
            planes[name] = from_float32(to_float32(plane, image.meta.pixel_types[name]), types[name])
        else:
            planes[name] = plane
    height, width = (out.shape[0], out.shape[1]) if out is not None else (image.height, image.width)
    meta = replace(image.meta, pixel_types=types)
    sink.write(Image(width, height, planes, meta))
    t3 = time.perf_counter()
    return Result(
        backend=backend.name,
        width=image.width,
        height=image.height,
        out_width=width,
        out_height=height,
        channels=list(names),
        seconds={"read": t1 - t0, "compute": t2 - t1, "write": t3 - t2, "total": t3 - t0},
    )
