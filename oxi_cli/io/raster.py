"""PNG (libpng via imagecodecs), TIFF (tifffile) and JPEG (imageio) files as gray/RGB(A) planes."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from oxi_cli.errors import InputError, UsageError
from oxi_cli.image import PIXEL_DTYPES, Image, ImageMeta
from oxi_cli.io import formats
from oxi_cli.io.common import ImageSpec, check_claim, check_readable, convert_plane, one_line, pixel_type_of

# Channel names by sample count; the writers look for these (R, G, B [, A] or Y [, A]).
NAMES_BY_COUNT = {1: ["Y"], 2: ["Y", "A"], 3: ["R", "G", "B"], 4: ["R", "G", "B", "A"]}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_IHDR_END = 33  # signature, IHDR length and type, 13 bytes of fields, CRC
# Bit depths the PNG specification allows for each colour type.
_PNG_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
PNG_MAX_SIDE = 1_000_000  # libpng's own default limit
# Worst-case decoded/compressed ratio of zlib (deflate tops out at 1032:1), with margin.
_ZLIB_RATIO = 1100
# OpenCV's fast PNG settings (zlib level 1, RLE strategy, Sub filter). On a 4096x2160 RGBA render they
# encoded 16-bit in 1.1 s vs 5.9 s at level 3 (13 s at level 6) and the file was 5 % smaller, not larger.
PNG_ENCODING = {"level": 1, "strategy": 3, "filter": 16}  # imagecodecs.PNG.STRATEGY.RLE, PNG.FILTER.SUB
JPEG_QUALITY = 95  # --quality's default: 1-100, as libjpeg's scale
# A JPEG spends at least one bit per 8x8 block and component (a one-bit Huffman code for "no change"):
# 4:2:0 colour decodes at most 768 bytes from 6 bits, about 1024:1; 4096 leaves room for odd subsampling.
_JPEG_RATIO = 4096
# Start-of-frame markers (baseline, progressive, lossless, arithmetic): they carry the image size.
_JPEG_FRAMES = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
# Names --compression accepts for TIFF -> tifffile's codec name (None = uncompressed).
TIFF_COMPRESSIONS: dict[str, str | None] = {
    "none": None,
    "deflate": "adobe_deflate",
    "lzw": "lzw",
    "packbits": "packbits",
    "zstd": "zstd",
    "lzma": "lzma",
}
TIFF_ALIASES = {"zip": "deflate", "adobe_deflate": "deflate", "no": "none"}
TIFF_MAX_SIDE = 1 << 20  # oxi's limit on an image side, as for EXR
# Worst-case decoded/compressed ratios (PackBits 128:2; LZW emits at most 4094 bytes per 12-bit code;
# deflate 1032:1), with margin; other codecs (zstd, lzma, JPEG...) can shrink a flat image almost without limit.
_TIFF_RATIOS = {"none": 1, "packbits": 64, "lzw": 2800, "adobe_deflate": _ZLIB_RATIO, "deflate": _ZLIB_RATIO}
_UNBOUNDED_RATIO = 1 << 21
DEFAULT_TIFF_COMPRESSION = "deflate"
PREDICTED_CODECS = ("adobe_deflate", "lzw", "zstd", "lzma")
# zlib level 1: a 4096x2160 float RGBA TIFF in 0.8 s instead of 2.7 s at the default 6, 4 % larger.
DEFLATE_LEVEL = 1

def _names(count: int) -> list[str]:
    if count in NAMES_BY_COUNT:
        return NAMES_BY_COUNT[count]
    return [*NAMES_BY_COUNT[4], *(f"extra{i}" for i in range(4, count))]


def _image(format: str, pixels: np.ndarray, planar: bool = False, **meta: Any) -> Image:
    """Planes as views of the decoded array: one (H, W) view per sample, no copies."""
    if pixels.ndim == 2:
        planes = {"Y": pixels}
    else:
        count = pixels.shape[0] if planar else pixels.shape[-1]
        views = [pixels[i] if planar else pixels[..., i] for i in range(count)]
        planes = dict(zip(_names(count), views, strict=True))
    height, width = next(iter(planes.values())).shape
    types = {name: pixel_type_of(plane) for name, plane in planes.items()}
    return Image(width, height, planes, ImageMeta(format=format, pixel_types=types, **meta))


def _corrupt(path: Path, label: str, error: BaseException | str) -> InputError:
    detail = one_line(error)
    return InputError(f"{path}: not a valid {label} file or it is truncated ({detail}); re-export or re-copy it")


# --- which planes an output gets ---------------------------------------------------------------------


def output_layout(image: Image, format: str) -> tuple[list[str], str]:
    """The channels `format` writes (RGB[A] or Y[A]; other layers are dropped, and alpha from JPEG and from a
    review frame: colour_tags.ColourTag.drops_alpha) and their one pixel type."""
    types = {name: image.meta.pixel_types.get(name) or pixel_type_of(plane) for name, plane in image.planes.items()}
    return layout_for(types, image.meta, format)


def layout_for(types: dict[str, str], meta: ImageMeta, format: str) -> tuple[list[str], str]:
    """output_layout for channels known by their pixel types alone (a file written by bands)."""
    described = formats.named(format)
    label = described.label
    have = types
    colour = meta.colour
    keeps_alpha = format != "jpeg" and not (colour is not None and colour.drops_alpha(format))
    alpha = ["A"] if "A" in have and keeps_alpha else []
    if all(c in have for c in ("R", "G", "B")):
        names = ["R", "G", "B", *alpha]
    elif "Y" in have:
        names = ["Y", *alpha]
    elif len(have) == 1:
        names = list(have)
    else:
        raise UsageError(f"{label} holds gray, gray+alpha, RGB or RGBA; this image has channels {', '.join(have)}")
    kind = have[names[0]]
    storable = described.stores
    if kind not in storable:
        choices = " or ".join(storable)
        raise UsageError(f"{label} stores {choices}, not {kind}; use --out-type {choices}")
    return names, kind


def interleave(image: Image, names: list[str], kind: str) -> np.ndarray:
    """One (H, W, C) array (or (H, W) for one channel) of `kind`, filled plane by plane: one copy."""
    if len(names) == 1:
        return np.ascontiguousarray(convert_plane(image.planes[names[0]], kind))
    out = np.empty((image.height, image.width, len(names)), dtype=PIXEL_DTYPES[kind])
    for i, name in enumerate(names):
        out[..., i] = convert_plane(image.planes[name], kind)
    return out


def png_codec(compression: str | None) -> None:
    """PNG has one codec (zlib, PNG_ENCODING): --compression is refused in one line."""
    if compression is not None:
        raise UsageError("--compression applies to EXR and TIFF outputs, not PNG")


def jpeg_quality(compression: str | None) -> int:
    """The JPEG quality --quality N asks for, as oiiotool spells it in a codec name ('jpeg:85'); JPEG_QUALITY
    for none. UsageError for another codec or a quality outside 1..100."""
    name, colon, value = (compression or "jpeg").strip().lower().partition(":")
    if name != "jpeg":
        raise UsageError(f"JPEG outputs take --quality 1-100 (default {JPEG_QUALITY}), not --compression {compression}")
    if not colon:
        return JPEG_QUALITY
    if not (value.isdigit() and 1 <= int(value) <= 100):
        raise UsageError(f"--quality must be 1..100 (default {JPEG_QUALITY}), got {value!r}")
    return int(value)


# --- PNG ---------------------------------------------------------------------------------------------


def _png_bytes(path: Path) -> bytes:
    check_readable(path)
    data = path.read_bytes()
    if not data.startswith(PNG_SIGNATURE):
        raise InputError(f"{path} is not a PNG file (no PNG signature); check the file or its extension")
    return data


def read_png(path: Path) -> Image:
    import imagecodecs

    data = _png_bytes(path)
    header = _png_header(path, data[:_IHDR_END], len(data))
    try:
        pixels = imagecodecs.png_decode(data)  # palettes and tRNS expand to RGB(A); 1-4 bit to uint8
    except MemoryError:  # the header was checked: this is the machine, not the file
        raise
    except Exception as e:
        raise _corrupt(path, "PNG", e) from None
    if pixels.shape[:2] != (header.height, header.width):
        got = f"{pixels.shape[1]}x{pixels.shape[0]}"
        raise _corrupt(path, "PNG", f"decoded {got} pixels, IHDR says {header.width}x{header.height}")
    return _image("png", pixels)


def read_png_spec(path: Path) -> ImageSpec:
    """From IHDR (and tRNS, which adds an alpha channel on decode), reading no pixel data."""
    check_readable(path)
    with open(path, "rb") as f:
        head = f.read(_IHDR_END)
        if not head.startswith(PNG_SIGNATURE):
            raise InputError(f"{path} is not a PNG file (no PNG signature); check the file or its extension")
        header = _png_header(path, head, os.fstat(f.fileno()).st_size)
        transparency = _png_has_trns(f)
    samples = header.channels + (1 if transparency and header.channels in (1, 3) else 0)
    kind = "uint16" if header.depth == 16 else "uint8"
    names = _names(samples)
    meta = ImageMeta(format="png", pixel_types=dict.fromkeys(names, kind))
    return ImageSpec(header.width, header.height, names, meta)


def _png_has_trns(f: Any) -> bool:
    """Whether a tRNS chunk comes before the pixel data; `f` is just past IHDR."""
    while len(chunk := f.read(8)) == 8:
        size, kind = struct.unpack(">I4s", chunk)
        if kind in (b"IDAT", b"IEND"):
            return False
        if kind == b"tRNS":
            return True
        f.seek(size + 4, 1)  # data and CRC
    return False


@dataclass
class _PngHeader:
    width: int
    height: int
    depth: int
    samples: int  # as stored: a palette index is 1
    channels: int  # as decoded: a palette expands to RGB


def _png_header(path: Path, head: bytes, file_size: int) -> _PngHeader:
    """IHDR checked against the PNG specification, and the pixels it claims against what the file can hold."""
    if len(head) < _IHDR_END or head[8:16] != b"\x00\x00\x00\x0dIHDR":
        raise _corrupt(path, "PNG", "no complete IHDR chunk")
    width, height, depth, color, compression, filtering, interlace = struct.unpack(">IIBBBBB", head[16:29])
    if color not in _PNG_DEPTHS or depth not in _PNG_DEPTHS[color]:
        raise _corrupt(path, "PNG", f"bit depth {depth} with colour type {color} is invalid")
    if compression or filtering or interlace > 1:
        raise _corrupt(path, "PNG", "unknown compression, filter or interlace method")
    if not (1 <= width <= PNG_MAX_SIDE and 1 <= height <= PNG_MAX_SIDE):
        raise _corrupt(path, "PNG", f"IHDR says {width}x{height}; sides must be 1..{PNG_MAX_SIDE}")
    samples = 1 if color == 3 else {0: 1, 2: 3, 4: 2, 6: 4}[color]
    raw = height * (1 + -(-width * samples * depth // 8))  # zlib's output: one filter byte per row
    check_claim(path, "PNG", width, height, raw, file_size, _ZLIB_RATIO)
    return _PngHeader(width, height, depth, samples, 3 if color == 3 else samples)


def write_png(image: Image, path: Path, compression: str | None = None) -> None:
    import imagecodecs

    png_codec(compression)
    names, kind = output_layout(image, "png")
    path.write_bytes(imagecodecs.png_encode(interleave(image, names, kind), **PNG_ENCODING))


# --- TIFF --------------------------------------------------------------------------------------------


def _tiff_page(tif: Any, path: Path) -> Any:
    """The first page, its header checked: sizes, samples, codec, and data that lies inside the file."""
    if not len(tif.pages):
        raise _corrupt(path, "TIFF", "no image: the first directory lies outside the file")
    try:
        page = tif.pages.first
        # Touch every field the checks use now: tifffile parses lazily, and its errors are Python's own.
        _ = (page.imagewidth, page.imagelength, page.samplesperpixel, page.compression, page.photometric)
        _ = (page.dtype, page.shape, page.dataoffsets, page.databytecounts)
    except Exception as e:  # IndexError, KeyError, ValueError... from a damaged header: all bad input
        raise _corrupt(path, "TIFF", _tiff_detail(e)) from None
    _check_tiff_fields(path, page)
    _check_tiff_data(path, page, tif.filehandle.size)
    return page


def _check_tiff_fields(path: Path, page: Any) -> None:
    import tifffile

    width, height, samples, codec = page.imagewidth, page.imagelength, page.samplesperpixel, page.compression
    if not (1 <= width <= TIFF_MAX_SIDE and 1 <= height <= TIFF_MAX_SIDE) or samples < 1:
        raise _corrupt(path, "TIFF", f"the header says {width}x{height} pixels of {samples} samples")
    if not isinstance(codec, tifffile.COMPRESSION) or codec not in tifffile.TIFF.DECOMPRESSORS:
        raise InputError(f"{path}: TIFF compression {int(codec)} is not supported; save it with deflate, LZW or none")
    photometric = tifffile.PHOTOMETRIC
    if page.photometric not in (photometric.MINISBLACK, photometric.RGB):
        raise InputError(
            f"{path}: TIFF photometric {_enum_name(page.photometric)} is not supported; save it as RGB or grayscale"
        )
    if page.photometric == photometric.RGB and samples < 3:
        raise _corrupt(path, "TIFF", f"an RGB image with {samples} samples per pixel")
    if page.dtype is None:  # tifffile found no numpy type for BitsPerSample / SampleFormat
        raise _corrupt(path, "TIFF", f"{page.bitspersample} bits per sample of format {int(page.sampleformat)}")
    if page.dtype not in (np.uint8, np.uint16, np.float16, np.float32, np.float64):
        raise InputError(f"{path}: TIFF samples of type {page.dtype} are not supported; use 8/16-bit integer or float")


def _check_tiff_data(path: Path, page: Any, size: int) -> None:
    """Strips or tiles inside the file, and no more pixels than their bytes can decode to."""
    offsets, counts = page.dataoffsets, page.databytecounts
    if len(offsets) != len(counts) or any(o + c > size for o, c in zip(offsets, counts, strict=True)):
        raise _corrupt(path, "TIFF", "its image data runs past the end of the file")
    name = page.compression.name.lower()
    decoded = int(np.prod(page.shape, dtype=np.int64)) * np.dtype(page.dtype).itemsize
    ratio = _TIFF_RATIOS.get(name, _UNBOUNDED_RATIO)
    check_claim(path, "TIFF", page.imagewidth, page.imagelength, decoded, sum(counts), ratio, name)


def _enum_name(value: Any) -> str:
    return getattr(value, "name", str(value))


def _tiff_compression_name(page: Any) -> str:
    name = page.compression.name.lower()
    return {"adobe_deflate": "deflate"}.get(name, name)


def _tiff_header(page: Any) -> dict[str, Any]:
    """What a TIFF output takes over from a TIFF input besides codec and types."""
    header: dict[str, Any] = {"predictor": int(page.predictor)}
    if page.is_tiled:
        header["tile"] = (int(page.tilelength), int(page.tilewidth))
    if page.extrasamples:
        header["extrasamples"] = [int(v) for v in page.extrasamples]
    tags = page.tags
    if "XResolution" in tags and "YResolution" in tags:
        header["resolution"] = (tags["XResolution"].value, tags["YResolution"].value)
        header["resolutionunit"] = int(tags["ResolutionUnit"].value) if "ResolutionUnit" in tags else 2
    if page.iccprofile:
        header["iccprofile"] = bytes(page.iccprofile)
    return header


def _tiff_header_of(path: Path, page: Any) -> dict[str, Any]:
    try:
        return _tiff_header(page)
    except Exception as e:  # a damaged tag (resolution, extra samples, ICC profile)
        raise _corrupt(path, "TIFF", _tiff_detail(e)) from None


def _tiff_detail(error: BaseException) -> str:
    """tifffile's own words for what it found; Python's (IndexError: 0...) say nothing to a user."""
    import tifffile

    return one_line(error) if isinstance(error, tifffile.TiffFileError) else "its header is damaged"


def _open_tiff(path: Path) -> Any:
    import tifffile

    check_readable(path)
    try:
        return tifffile.TiffFile(path)
    except Exception as e:
        if "not a TIFF file" in str(e):
            raise InputError(
                f"{path} is not a TIFF file (no TIFF signature); check the file or its extension"
            ) from None
        raise _corrupt(path, "TIFF", _tiff_detail(e)) from None


def _tiff_levels(tif: Any, page: Any) -> str:
    """"mipmap" when the pages after the first are reduced-resolution copies of it: a texture (`maketx`'s .tx,
    which OIIO recognises by its TextureFormat tag) or a pyramid (NewSubfileType's reduced-image bit, SubIFDs);
    "one" otherwise (another page of a multi-page TIFF is another image, not a level of this one)."""
    try:
        if page.subifds:
            return "mipmap"
        if len(tif.pages) > 1 and ("TextureFormat" in page.tags or tif.pages[1].is_reduced):
            return "mipmap"
    except Exception:  # a damaged second directory: the first page is still the image
        return "one"
    return "one"


def read_tiff(path: Path) -> Image:
    """The first page (first image of a multi-page TIFF; a texture's top level); float64 narrows to float32."""
    import tifffile

    with _open_tiff(path) as tif:
        page = _tiff_page(tif, path)
        header = _tiff_header_of(path, page)
        try:
            pixels = page.asarray()
        except MemoryError:
            raise
        except Exception as e:
            raise _corrupt(path, "TIFF", _tiff_detail(e) if not isinstance(e, OSError) else e) from None
        if pixels.shape != page.shape or pixels.ndim not in (2, 3):
            raise _corrupt(path, "TIFF", f"decoded an array of shape {pixels.shape}, not {page.shape}")
        if pixels.dtype == np.float64:
            pixels = pixels.astype(np.float32)
        planar = page.samplesperpixel > 1 and int(page.planarconfig) == tifffile.PLANARCONFIG.SEPARATE
        return _image("tiff", pixels, planar, compression=_tiff_compression_name(page), header=header,
                      levels=_tiff_levels(tif, page))


def read_tiff_spec(path: Path) -> ImageSpec:
    with _open_tiff(path) as tif:
        page = _tiff_page(tif, path)
        names = _names(page.samplesperpixel)
        kind = "float" if page.dtype == np.float64 else pixel_type_of(np.empty(0, page.dtype))
        meta = ImageMeta(
            format="tiff",
            pixel_types=dict.fromkeys(names, kind),
            compression=_tiff_compression_name(page),
            header=_tiff_header_of(path, page),
            levels=_tiff_levels(tif, page),
        )
        return ImageSpec(page.imagewidth, page.imagelength, names, meta)


def tiff_codec(name: str) -> str | None:
    """tifffile's codec for a user-given name; UsageError listing the valid names."""
    key = name.strip().lower()
    key = TIFF_ALIASES.get(key, key)
    if key not in TIFF_COMPRESSIONS:
        raise UsageError(f"unknown TIFF compression {name!r}; use one of {', '.join(TIFF_COMPRESSIONS)}")
    return TIFF_COMPRESSIONS[key]


def write_tiff(
    image: Image, path: Path, compression: str | None = None, *, tile: tuple[int, int] | None = None
) -> None:
    """A TIFF of `image`'s R, G, B[, A] (or Y[, A]), in strips, or in tiles as a tiled TIFF input had them (`tile`:
    these tiles whatever the input)."""
    import tifffile

    names, kind = output_layout(image, "tiff")
    meta = image.meta
    source = meta.header if meta.format == "tiff" else {}
    if compression is None:
        same = meta.compression if meta.format == "tiff" else None
        # A codec oxi can't write (JPEG-in-TIFF, ...) becomes the lossless default.
        compression = same if same in TIFF_COMPRESSIONS else DEFAULT_TIFF_COMPRESSION
    codec = tiff_codec(compression)
    options: dict[str, Any] = {}
    # A TIFF input's predictor is kept; other inputs get one (smaller files, same speed).
    if codec in PREDICTED_CODECS and (source.get("predictor", 1) > 1 if source else True):
        options["predictor"] = True  # tifffile picks horizontal or floating-point by dtype
    if codec == "adobe_deflate":
        options["compressionargs"] = {"level": DEFLATE_LEVEL}
    tile = tile or source.get("tile")
    if tile is not None:
        options["tile"] = tile
    if "A" in names:
        # EXR alpha is premultiplied (associated); PNG's is not. A TIFF input says which it had.
        default = 1 if meta.format == "exr" else 2
        options["extrasamples"] = source.get("extrasamples", [default])[:1]
    # The input's ICC profile describes its colour space: a conversion's output is in another (ImageMeta.colour).
    kept = ("resolution", "resolutionunit", *(("iccprofile",) if meta.colour is None else ()))
    for key in kept:
        if key in source:
            options[key] = source[key]
    tifffile.imwrite(
        path,
        interleave(image, names, kind),
        photometric="rgb" if len(names) >= 3 else "minisblack",
        planarconfig="contig",
        compression=codec,
        metadata=None,  # no tifffile JSON in ImageDescription
        software="oxi",
        **options,
    )


# The tile size maketx writes textures with.
TEXTURE_TILE = (64, 64)


def write_tx(image: Image, path: Path, compression: str | None = None) -> None:
    """A `.tx` is a TIFF (as oiiotool's `-o out.tx` writes one): written tiled, one level, and said so once, since
    renderers want the MIP levels maketx builds."""
    import warnings

    source_tile = image.meta.header.get("tile") if image.meta.format == "tiff" else None
    write_tiff(image, path, compression, tile=source_tile or TEXTURE_TILE)
    warnings.warn(
        "a .tx output is a one-level tiled TIFF (as oiiotool -o writes it): build its MIP levels for a renderer "
        "with maketx (maketx OUT.tx -o OUT.tx)",
        TextureLevelsWarning,
        stacklevel=2,
    )


class TextureLevelsWarning(UserWarning):
    """A texture output written with its top level alone."""


# --- JPEG --------------------------------------------------------------------------------------------


def _jpeg_info(path: Path) -> tuple[str, int, int]:
    """Mode, width and height from the JPEG header, the size checked against what the file can hold."""
    import imageio.v3 as iio

    check_readable(path)
    width, height = _jpeg_size(path)
    check_claim(path, "JPEG", width, height, width * height * 3, path.stat().st_size, _JPEG_RATIO)
    try:
        mode = iio.immeta(path, plugin="pillow", extension=".jpg")["mode"]
    except MemoryError:
        raise
    except Exception as e:
        raise InputError(f"{path}: not a valid JPEG file ({one_line(e)}); check the file or its extension") from None
    return mode, width, height


def _jpeg_size(path: Path) -> tuple[int, int]:
    """Width and height from the frame header (SOFn), walking the markers before it; no pixel is read."""
    with open(path, "rb") as f:
        if f.read(2) != b"\xff\xd8":
            raise InputError(f"{path} is not a JPEG file (no JPEG signature); check the file or its extension")
        while len(marker := f.read(4)) == 4 and marker[0] == 0xFF:
            kind, length = marker[1], int.from_bytes(marker[2:4], "big")
            if kind == 0xFF or kind == 0x01 or 0xD0 <= kind <= 0xD7:  # a fill byte, or a marker with no length
                f.seek(-3 if kind == 0xFF else -2, 1)
                continue
            if kind in _JPEG_FRAMES:
                frame = f.read(5)
                if len(frame) == 5:
                    height, width = int.from_bytes(frame[1:3], "big"), int.from_bytes(frame[3:5], "big")
                    if width and height:
                        return width, height
                break
            f.seek(length - 2, 1)
    raise _corrupt(path, "JPEG", "no frame header with a size")


def read_jpeg(path: Path) -> Image:
    """8-bit gray or RGB; CMYK and other modes convert to RGB."""
    import imageio.v3 as iio

    mode, _, _ = _jpeg_info(path)
    try:
        pixels = iio.imread(path, plugin="pillow", extension=".jpg", mode=None if mode in ("L", "RGB") else "RGB")
    except MemoryError:
        raise
    except Exception as e:
        raise _corrupt(path, "JPEG", e) from None
    return _image("jpeg", pixels)


def read_jpeg_spec(path: Path) -> ImageSpec:
    mode, width, height = _jpeg_info(path)
    names = _names(1 if mode == "L" else 3)
    return ImageSpec(width, height, names, ImageMeta(format="jpeg", pixel_types=dict.fromkeys(names, "uint8")))


def write_jpeg(image: Image, path: Path, compression: str | None = None) -> None:
    """8-bit gray or RGB at the quality `compression` names ('jpeg:85', see jpeg_quality)."""
    import imageio.v3 as iio

    quality = jpeg_quality(compression)
    names, kind = output_layout(image, "jpeg")
    iio.imwrite(path, interleave(image, names, kind), plugin="pillow", extension=".jpg", quality=quality)
