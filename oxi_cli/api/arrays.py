"""apply(): a chain on pixels already in memory (numpy arrays, oxi Images); read() and write() through oxi's I/O."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from oxi_cli.api.devices import Backend, backend_for
from oxi_cli.api.ops import Chain, Op, as_chain, step_ops
from oxi_cli.errors import UsageError
from oxi_cli.image import Image, ImageMeta

if TYPE_CHECKING:
    import numpy as np

FileName = str | PathLike[str]
# Channel names an (H, W, C) array gets when none are given.
DEFAULT_CHANNELS = {1: ("Y",), 3: ("R", "G", "B"), 4: ("R", "G", "B", "A")}
PIXEL_TYPES = {"float32": "float", "float16": "half"}


@overload
def apply(pixels: np.ndarray, chain: Chain | Op | Sequence[Op], *, channels: Sequence[str] | None = None,
          backend: str | Backend | None = None, layers: str | None = None,
          out: np.ndarray | None = None) -> np.ndarray: ...


@overload
def apply(pixels: Image, chain: Chain | Op | Sequence[Op], *, channels: None = None,
          backend: str | Backend | None = None, layers: str | None = None, out: None = None) -> Image: ...


def apply(pixels: np.ndarray | Image, chain: Chain | Op | Sequence[Op], *, channels: Sequence[str] | None = None,
          backend: str | Backend | None = None, layers: str | None = None,
          out: np.ndarray | None = None) -> np.ndarray | Image:
    """Run `chain` on pixels in memory and return the result; the input is never modified.

    `pixels`: a float32 or float16 numpy array (H, W, C), its channels named by `channels` (default R,G,B or
    R,G,B,A for 3 or 4, Y for 1): colour ops grade R, G, B (and each layer's, "diffuse.R"...: `layers` as the
    command's --layers), image ops (Resize, Blur) every channel. The result is a new array of the input's dtype
    (its size changed by any resize; a resize into a box with `fit` pads, as a PNG would get), or `out`'s
    contents when given (the right shape and dtype; it may be `pixels` itself).
    Or an oxi Image (read()): every part, channel, pixel type, window and attribute comes back, as
    process() would write them. `backend`: "auto" (default: the job weighed as the command weighs a file),
    "cpu", "gpu", or an open_backend() Backend; named kinds are opened on first use and kept for later calls.
    """
    chain = as_chain(chain)
    if isinstance(pixels, Image):
        if channels is not None or out is not None:
            raise UsageError("channels= and out= are for numpy arrays; an Image names its own channels")
        return _apply_image(pixels, chain, backend, layers)
    return _apply_array(pixels, chain, channels, backend, layers, out)


def _apply_array(pixels: Any, chain: Chain, channels: Sequence[str] | None, backend: str | Backend | None,
                 layers: str | None, out: Any) -> np.ndarray:
    import numpy as np

    from oxi_cli.channels import LayerRule
    from oxi_cli.execute import part_groups, process_part, spec_of

    if not isinstance(pixels, np.ndarray):
        raise TypeError(f"apply takes a numpy array or an oxi Image, not {type(pixels).__name__}")
    kind = PIXEL_TYPES.get(pixels.dtype.name)
    if pixels.ndim != 3 or kind is None:
        raise UsageError(f"apply takes a float32 or float16 array of shape (height, width, channels), got "
                         f"{pixels.dtype.name} {pixels.shape}; convert with array.astype(numpy.float32)")
    height, width, count = pixels.shape
    names = _channel_names(channels, count)
    ops = step_ops(chain, width, height, windows=False)
    # Copies, ours to compute in (the backend adopts them): the caller's array is never written.
    planes = {name: pixels[..., i].copy() for i, name in enumerate(names)}
    image = Image(width, height, planes, ImageMeta("exr", dict.fromkeys(names, kind)))
    groups = part_groups(spec_of(image), ops, LayerRule.parse(layers))[0]
    device = backend_for(backend, ops, width, height, count, pixels.itemsize)._raw if groups else None
    result = process_part(device, image, ops, groups, "same", "exr", fresh=True)  # type: ignore[arg-type]
    shape = (result.height, result.width, count)
    if out is None:
        return np.stack([result.planes[name] for name in names], axis=-1)
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != pixels.dtype:
        got = f"{out.dtype.name} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
        raise UsageError(f"out= must be a {pixels.dtype.name} array of shape {shape}, got {got}")
    for i, name in enumerate(names):
        out[..., i] = result.planes[name]
    return out


def _channel_names(channels: Sequence[str] | None, count: int) -> tuple[str, ...]:
    if channels is None:
        if count not in DEFAULT_CHANNELS:
            raise UsageError(f"an array of {count} channels needs channels=[...] naming each (e.g. R, G, B, A, Z)")
        return DEFAULT_CHANNELS[count]
    names = (channels,) if isinstance(channels, str) else tuple(channels)
    if len(names) != count or not all(isinstance(n, str) and n for n in names) or len(set(names)) != count:
        raise UsageError(f"channels= must name each of the array's {count} channels once, got {list(names)}")
    return names


def _apply_image(image: Image, chain: Chain, backend: str | Backend | None, layers: str | None) -> Image:
    from oxi_cli.channels import LayerRule
    from oxi_cli.execute import MemorySink, MemorySource, execute, working_channels
    from oxi_cli.io.formats import named

    ops = step_ops(chain, image.width, image.height, windows=named(image.meta.format).keeps_windows,
                   frame=image.meta.windows)
    rule = LayerRule.parse(layers)
    spec = MemorySource(image).spec()
    names = working_channels(spec, ops, rule)
    bytes_per_sample = 2 if all(image.meta.pixel_types.get(n) == "half" for n in names) else 4
    device = backend_for(backend, ops, image.width, image.height, len(names), bytes_per_sample)
    sink = MemorySink(image.meta.format)
    execute(ops, MemorySource(image), sink, device._raw, layers=rule)  # type: ignore[arg-type]
    assert sink.image is not None
    return _unshared(sink.image, image)


def _unshared(result: Image, source: Image) -> Image:
    """`result` with nothing of `source` in it: channels the chain left alone come back as copies, headers too."""
    theirs = {id(plane) for part in source.all_parts() for plane in part.planes.values()}
    parts = []
    for part in result.all_parts():
        planes = {n: p.copy() if id(p) in theirs else p for n, p in part.planes.items()}
        meta = dataclasses.replace(part.meta, header=dict(part.meta.header), pixel_types=dict(part.meta.pixel_types))
        parts.append(dataclasses.replace(part, planes=planes, meta=meta, parts=[]))
    first, *others = parts
    first.parts = others
    return first


def read(path: FileName, *, part: str | int | None = None) -> Image:
    """Decode an image file (EXR, PNG, TIFF, JPEG) whole: an Image with every part (`parts`), each with its planes
    in the file's pixel types, windows and attributes (`meta.header`), so write() can keep what the file carries.
    `part` (a name or 0-based index) keeps that part alone. Raises InputError for a missing or broken file."""
    from oxi_cli.channels import select_part
    from oxi_cli.io import read_image

    image = read_image(path)
    return image if part is None else select_part(image, str(part), path)


def write(image: Image, path: FileName, *, compression: str | None = None, out_type: str | None = None) -> None:
    """Write `image` (every part) in the format of `path`'s extension, atomically: an existing file is replaced
    whole or not at all. `compression`: an EXR codec (zip, piz, dwaa...) or TIFF's; default the image's.
    `out_type`: "half", "float", "uint8" or "uint16" for every channel; default each channel's own type, or the
    nearest the format stores (half pixels go to a PNG as 16-bit, clipped to 0..1: encode them first, with a
    Display or ColorSpace op)."""
    from oxi_cli.execute import output_types
    from oxi_cli.io import write_image
    from oxi_cli.io.common import output_format

    fmt = output_format(Path(path))
    parts = [dataclasses.replace(p, meta=dataclasses.replace(p.meta, pixel_types=output_types(p, out_type or "same",
                                                                                              fmt)), parts=[])
             for p in image.all_parts()]
    first, *others = parts
    first.parts = others
    write_image(first, path, compression=compression)


def to_array(image: Image, channels: Sequence[str] | None = None) -> np.ndarray:
    """An Image's (first part's) channels as one (H, W, C) array: float16 when every one is half, else float32
    (8- and 16-bit integers scaled to 0..1). `channels` picks and orders them; default all, in the image's order."""
    import numpy as np

    from oxi_cli.execute import working_planes

    names = list(image.channels if channels is None else channels)
    missing = [n for n in names if n not in image.planes]
    if missing:
        raise UsageError(f"the image has no channel {missing[0]}; it has {', '.join(image.channels)}")
    return np.stack(working_planes(image, names), axis=-1)


def from_array(pixels: np.ndarray, channels: Sequence[str] | None = None, *, like: Image | None = None) -> Image:
    """An Image of a float32 or float16 (H, W, C) array, to write(): its channels named as apply() names them.
    `like`: an Image whose attributes, compression and (for the same size) windows it takes, and the pixel type
    of each channel it shares; others are stored as the array's type."""
    import numpy as np

    kind = PIXEL_TYPES.get(pixels.dtype.name) if isinstance(pixels, np.ndarray) else None
    if kind is None or pixels.ndim != 3:
        raise UsageError("from_array takes a float32 or float16 array of shape (height, width, channels)")
    height, width, count = pixels.shape
    names = _channel_names(channels, count)
    planes = {name: pixels[..., i].copy() for i, name in enumerate(names)}
    types = {n: like.meta.pixel_types.get(n, kind) if like is not None else kind for n in names}
    if like is None:
        return Image(width, height, planes, ImageMeta("exr", types))
    same_size = (like.width, like.height) == (width, height)
    meta = dataclasses.replace(like.meta, pixel_types=types, header=dict(like.meta.header),
                               windows=like.meta.windows if same_size else None)
    return Image(width, height, planes, meta)
