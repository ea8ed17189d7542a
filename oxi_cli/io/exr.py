"""OpenEXR files through OpenEXR 3.5's `OpenEXR.File`, keeping header, codec, types, windows and parts."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import OpenEXR

from oxi_cli.colour_tags import COLOUR_KEYS, ColourTag
from oxi_cli.errors import InputError, UsageError
from oxi_cli.host import cores
from oxi_cli.image import Image, ImageMeta
from oxi_cli.io import exr_chunks
from oxi_cli.io.common import ImageSpec, cast_plane, check_readable, one_line, ordered_channels, pixel_type_of
from oxi_cli.io.exr_header import MAGIC, ExrLayout, read_layout
from oxi_cli.io.native import native_messages
from oxi_cli.ops.base import Box, scaled_windows

# Codec names (lowercase, as exrheader prints them) -> OpenEXR attribute; only those this build has.
_CODEC_ATTRS = {
    "none": "NO_COMPRESSION",
    "rle": "RLE_COMPRESSION",
    "zips": "ZIPS_COMPRESSION",
    "zip": "ZIP_COMPRESSION",
    "piz": "PIZ_COMPRESSION",
    "pxr24": "PXR24_COMPRESSION",
    "b44": "B44_COMPRESSION",
    "b44a": "B44A_COMPRESSION",
    "dwaa": "DWAA_COMPRESSION",
    "dwab": "DWAB_COMPRESSION",
    "zstd": "ZSTD_COMPRESSION",
    "htj2k256": "HTJ2K256_COMPRESSION",
    "htj2k32": "HTJ2K32_COMPRESSION",
    "lj2k": "LJ2K_COMPRESSION",
}
COMPRESSIONS: dict[str, Any] = {
    name: getattr(OpenEXR, attr) for name, attr in _CODEC_ATTRS.items() if hasattr(OpenEXR, attr)
}
# Other spellings users type (oiiotool says "htj2k"); they map to a name above.
ALIASES = {"htj2k": "htj2k256", "no": "none", "deflate": "zip"}
_NAME_OF = {code: name for name, code in COMPRESSIONS.items()}
DEFAULT_COMPRESSION = "zip"
DWA_CODECS = ("dwaa", "dwab")
DWA_LEVEL = "dwaCompressionLevel"  # the header attribute OpenEXR reads a DWA level from
EXR_TYPES = ("half", "float", "uint32")
_MULTIPART_FLAG = 0x1000  # bit 12 of the version field
# Header entries that describe the pixels rather than the picture: rebuilt from the planes on write.
_DERIVED = ("channels", "chunkCount")


def set_threads(n: int) -> None:
    """Threads OpenEXR and oxi's chunk codec use to decode and encode chunks (OpenEXR's default, 0, is
    single-threaded)."""
    OpenEXR.set_global_thread_count(max(1, int(n)))
    exr_chunks.set_threads(n)


set_threads(cores())


def parse_compression(text: str) -> tuple[str, float | None]:
    """A user's --compression as oiiotool spells it: the codec's name, and the DWA level after a colon
    (dwab:45 -> ("dwab", 45.0); OpenEXR's dwaCompressionLevel, default 45: higher is smaller and lossier)."""
    name, colon, level = text.strip().lower().partition(":")
    key = ALIASES.get(name, name)
    if key not in COMPRESSIONS:
        raise UsageError(f"unknown EXR compression {text!r}; use one of {', '.join(COMPRESSIONS)}")
    if not colon:
        return key, None
    if key in ("zip", "zips"):
        raise UsageError(f"{key} takes no level ({text!r}): OpenEXR's Python writer ignores zipCompressionLevel and "
                         f"oxi writes zlib level 4, OpenEXR's default (level 9 saves about 2 % at 4-5x the time); "
                         f"use {key}")
    if key not in DWA_CODECS:
        raise UsageError(f"only dwaa and dwab take a level (e.g. dwab:45), not {key} ({text!r})")
    try:
        value = float(level)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise UsageError(f"the DWA compression level must be a number 0 or more (OpenEXR's default is 45; higher "
                         f"is smaller and lossier), got {level!r}")
    return key, value


# --- reading ---------------------------------------------------------------------------------------


def native_detail(lines: list[str], error: BaseException | None) -> str:
    """The most specific thing OpenEXR said: its error code and text, without the file name."""
    for line in lines:
        if "(EXR_ERR_" in line:  # "<file>: (EXR_ERR_CODE) text" -> "EXR_ERR_CODE: text"
            code, _, text = line[line.index("(EXR_ERR_") + 1 :].partition(")")
            return f"{code}: {one_line(text)}"
    for line in lines:
        if line.strip():
            return one_line(line)
    if error is not None and str(error).startswith("Unable to open"):
        # Said when the header itself does not parse; the file exists and has the EXR signature.
        return "its header is incomplete or damaged"
    return one_line(error) if error is not None else "unknown error"


def check_magic(path: Path) -> bool:
    """Refuse anything without the EXR signature; return whether the file says it is multi-part."""
    with open(path, "rb") as f:
        head = f.read(8)
    if head[:4] != MAGIC:
        raise InputError(f"{path} is not an OpenEXR file (no EXR signature); check the file or its extension")
    return bool(int.from_bytes(head[4:8], "little") & _MULTIPART_FLAG)


def check_layout(path: Path) -> ExrLayout:
    """The file's checked headers (io/exr_header.py), refusing what oxi cannot process, before OpenEXR reads it."""
    check_readable(path)
    check_magic(path)
    layout = read_layout(path)
    for i, part in enumerate(layout.parts):
        if part.deep:
            raise InputError(f"{path}: part {i} holds deep data, which oxi cannot process; flatten it first")
        for name, channel in part.channels.items():
            _refuse_subsampled(path, name, channel.x_sampling, channel.y_sampling)
    return layout


def _open(path: Path, *, header_only: bool) -> tuple[OpenEXR.File, ExrLayout]:
    """OpenEXR.File with every failure turned into an InputError naming the file and the cause."""
    layout = check_layout(path)
    error: BaseException | None = None
    f, parts = None, []
    with native_messages() as lines:
        try:
            f = OpenEXR.File(str(path), separate_channels=True, header_only=header_only)
            parts = f.parts
        except MemoryError:  # the header was checked: this is the machine, not the file
            raise
        except Exception as e:  # the binding raises RuntimeError / ValueError with terse text
            error = e
    # A part whose pixels fail to decode is dropped (with a printed warning), not raised: count them.
    if error is not None or len(parts) < len(layout.parts):
        own = [line for line in lines if str(path) in line] or lines  # other threads' lines may be here too
        raise InputError(
            f"{path}: the EXR file is truncated or corrupt ({native_detail(own, error)}); re-export or re-copy it"
        )
    return f, layout


def _refuse_subsampled(path: Path, name: str, x: int, y: int) -> None:
    if x != 1 or y != 1:
        raise InputError(
            f"{path}: channel {name} is subsampled ({x}x{y}), which oxi cannot process; "
            "convert it to full-resolution RGB first"
        )


def _clean_header(header: dict[str, Any]) -> dict[str, Any]:
    # dict() copies: the binding empties its own header dict when the file closes (NOTES §3).
    return {k: v for k, v in dict(header).items() if k not in _DERIVED}


def _meta(header: dict[str, Any], pixel_types: dict[str, str], levels: str = "one") -> ImageMeta:
    compression = _NAME_OF.get(header.get("compression"), DEFAULT_COMPRESSION)
    return ImageMeta(
        format="exr", pixel_types=pixel_types, compression=compression, header=header, windows=_windows_of(header),
        levels=levels,
    )


def _windows_of(header: dict[str, Any]) -> tuple[Box, Box] | None:
    """The header's data and display windows as (x, y, width, height) boxes."""
    if "dataWindow" not in header:
        return None
    boxes = []
    for key in ("dataWindow", "displayWindow"):
        (x0, y0), (x1, y1) = header.get(key, header["dataWindow"])
        boxes.append((int(x0), int(y0), int(x1 - x0 + 1), int(y1 - y0 + 1)))
    return boxes[0], boxes[1]


def _window_size(header: dict[str, Any]) -> tuple[int, int]:
    lo, hi = header["dataWindow"]
    return int(hi[0] - lo[0] + 1), int(hi[1] - lo[1] + 1)


def read(path: Path) -> Image:
    """Decode every part's pixels: the first part, holding the others in Image.parts."""
    f, layout = _open(path, header_only=False)
    first, *others = [_part_image(part, checked) for part, checked in zip(f.parts, layout.parts, strict=True)]
    first.parts = others
    return first


def _part_image(part: Any, checked: Any) -> Image:
    header = _clean_header(part.header)
    channels = part.channels
    planes = {name: channels[name].pixels for name in ordered_channels(list(channels))}
    width, height = _window_size(header)
    types = {name: pixel_type_of(p) for name, p in planes.items()}
    return Image(width, height, planes, _meta(header, types, checked.level_mode))


def read_spec(path: Path) -> ImageSpec:
    """Size, channels and header of every part (the first, holding the others), reading only the headers."""
    f, layout = _open(path, header_only=True)
    first, *others = [_part_spec(part, checked) for part, checked in zip(f.parts, layout.parts, strict=True)]
    first.parts = others
    return first


def _part_spec(part: Any, checked: Any) -> ImageSpec:
    header = _clean_header(part.header)
    types = {name: channel.type for name, channel in checked.channels.items()}
    names = ordered_channels(list(types))
    width, height = _window_size(header)
    return ImageSpec(width, height, names, _meta(header, {name: types[name] for name in names}, checked.level_mode))


def describe(spec: ImageSpec) -> dict[str, Any]:
    """What `oxi info` shows of an EXR part beyond every format's fields (io/formats.py's "describe")."""
    header = spec.meta.header
    tiles = header.get("tiles")
    return {
        "storage": "tiled" if tiles is not None else "scanline",
        "tiles": tiles,
        "data_window": header.get("dataWindow"),
        "display_window": header.get("displayWindow"),
        "pixel_aspect": header.get("pixelAspectRatio", 1.0),
    }


# --- writing ---------------------------------------------------------------------------------------


def _box(x0: int, y0: int, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([x0, y0], dtype=np.int32), np.array([x0 + width - 1, y0 + height - 1], dtype=np.int32))


def output_windows(meta: ImageMeta, width: int, height: int) -> tuple[tuple, tuple]:
    """Data and display windows (as the header stores them) for a `width` x `height` image written like `meta`.

    The windows the chain gave (ImageMeta.windows, see ImageOp.windows: a fit places the picture in its
    box) when they are this size; otherwise, an image resized outside a chain, both scaled as --resize does.
    No windows at all (a PNG input): the picture at (0, 0).
    """
    data, display = meta.windows or ((0, 0, width, height),) * 2
    if data[2:] != (width, height):
        data, display = scaled_windows(data, display, width, height)
    return _box(*data), _box(*display)


def _single_level(tiles: Any) -> Any:
    """Only level 0 of a mip/rip-mapped file is processed, so write a one-level tiled file."""
    if tiles.mode == OpenEXR.ONE_LEVEL:
        return tiles
    one = OpenEXR.TileDescription()
    one.xSize, one.ySize = tiles.xSize, tiles.ySize
    one.mode, one.roundingMode = OpenEXR.ONE_LEVEL, tiles.roundingMode
    return one


def _planes_for_exr(image: Image) -> dict[str, np.ndarray]:
    planes = {}
    for name, plane in image.planes.items():
        kind = image.meta.pixel_types.get(name) or pixel_type_of(plane)
        if kind not in EXR_TYPES:
            raise UsageError(
                f"EXR stores half, float or uint32 channels, not {kind} (channel {name}); use --out-type half or float"
            )
        planes[name] = cast_plane(plane, kind)
    return planes


def output_header(meta: ImageMeta, width: int, height: int, compression: str | None = None) -> dict[str, Any]:
    """The first part's header for a `width` x `height` output written like the file `meta` came from.

    Shared by prepared() and the band writer in io/exr_stream.py, so both keep the same attributes.
    """
    source = meta.header if meta.format == "exr" else {}
    header = {k: v for k, v in source.items() if k not in _DERIVED}
    if compression is not None:  # a codec asked for: the input's DWA level goes with the input's codec
        header.pop(DWA_LEVEL, None)
    else:
        compression = meta.compression if meta.format == "exr" and meta.compression else DEFAULT_COMPRESSION
    codec, level = parse_compression(compression)
    header["compression"] = COMPRESSIONS[codec]
    if level is not None:
        header[DWA_LEVEL] = level
    if meta.colour is not None:
        tag_colour(header, meta.colour)
    header["dataWindow"], header["displayWindow"] = output_windows(meta, width, height)
    header.setdefault("type", OpenEXR.scanlineimage)
    if "tiles" in header:
        header["tiles"] = _single_level(header["tiles"])
    elif header.get("lineOrder") == OpenEXR.RANDOM_Y:
        # Valid only for tiled files, though OpenEXR reads a scanline file that says it; a scanline output
        # written with it is refused by OpenEXR, so write the order the pixels are stored in.
        header["lineOrder"] = OpenEXR.INCREASING_Y
    return header


def tag_colour(header: dict[str, Any], tag: ColourTag) -> None:
    """Say in `header` what colour space the pixels are now in, in place of what the input said (stale colour
    attributes are worse than none): colorInteropID (OpenEXR 3.4's standard attribute, which OIIO 3 reads and
    writes), oiio:ColorSpace (the config's name, which OIIO reads where no colorInteropID is), and the
    chromaticities of a linear space with known primaries."""
    for key in COLOUR_KEYS:
        header.pop(key, None)
    if tag.interop_id:
        header["colorInteropID"] = tag.interop_id
    header["oiio:ColorSpace"] = tag.name
    if tag.chromaticities is not None:
        header["chromaticities"] = tag.chromaticities


def prepared(image: Image, compression: str | None = None) -> list[tuple[dict[str, Any], dict[str, np.ndarray]]]:
    """What an EXR of `image` holds, written like the file it came from: each part's header and planes, checked.

    Every part takes the first part's display window: OpenEXR refuses a file whose parts' display windows differ.
    """
    written = []
    for part in image.all_parts():
        if not part.planes:
            raise UsageError("the image has no channels to write")
        header = output_header(part.meta, part.width, part.height, compression)
        if written:
            header["displayWindow"] = written[0][0]["displayWindow"]
        planes = _planes_for_exr(part)
        for name, plane in planes.items():
            if plane.shape != (part.height, part.width):
                raise UsageError(
                    f"channel {name} is {plane.shape[1]}x{plane.shape[0]}, not {part.width}x{part.height}"
                )
        written.append((header, planes))
    return written


def write_parts(parts: list[tuple[dict[str, Any], dict[str, np.ndarray]]], path: Path) -> None:
    """Write prepared() parts at `path` (the caller's temporary) through OpenEXR's whole-file writer."""
    error: BaseException | None = None
    with native_messages() as lines:
        try:
            if len(parts) > 1:
                # Part() and File() replace the arrays in the dicts they get by Channel objects: give copies.
                named = zip(parts, _part_names(parts), strict=True)
                written = [OpenEXR.Part(dict(header), dict(planes), name) for (header, planes), name in named]
                OpenEXR.File(written).write(str(path))
            else:
                header, planes = parts[0]
                OpenEXR.File(header, planes).write(str(path))
        except Exception as e:
            error = e
    if error is not None:
        # write_image() turns this into one ProcessingError line naming the output, not the temporary.
        raise RuntimeError(native_detail(lines, error)) from error


def _part_names(parts: list[tuple[dict[str, Any], dict[str, np.ndarray]]]) -> list[str]:
    """Each part's name (a multi-part file needs one each, all different): its own, else part<index>."""
    return [str(header.get("name") or f"part{i}") for i, (header, _) in enumerate(parts)]
