"""The image file formats: each declares itself once (extensions, what it stores and keeps, its functions), and
code outside its module asks the format, never names it. A new format is its module plus one `register` line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from oxi_cli.lazy import load


@dataclass(frozen=True)
class Format:
    """What a file format is to oxi, as libvips' foreign classes describe theirs.

    `roles` maps what the format can do to "module:function" in oxi_cli.io, imported on first use (so asking
    which formats exist imports no codec). Every format has `read(path) -> Image`, `read_spec(path) ->
    ImageSpec`, `write(image, path, compression)` and `codec(text) -> the codec setting` (its --compression, or a
    quality for JPEG). A format read by bands of rows also has `region_blocker(path) -> reason | None` (why this
    file goes whole) and `region_reader(path)`; one written by bands, `band_writer(tmp, header, types, name)`, with
    `band_header(meta, width, height, compression)` and `band_notes(spec)` (what banding changes in how the
    file is stored); a format describing more than the common fields in `oxi info` has `describe(spec) -> dict`.
    """

    name: str
    label: str
    extensions: tuple[str, ...]
    stores: tuple[str, ...]  # pixel types it holds, best first: an output of another type falls back along these
    keeps_windows: bool  # a data window apart from the display window
    roles: dict[str, str] = field(default_factory=dict)
    any_channels: bool = False  # holds every channel by name (else RGB[A] or Y[A]: the writer drops the rest)
    quality: bool = False  # its codec setting is a quality (--quality N), not a compression
    parts: bool = False  # a file may hold several images (EXR parts), each in Image.parts
    codec_hint: str = ""  # what --compression takes, for its error

    def can(self, role: str) -> bool:
        return role in self.roles

    @property
    def regions(self) -> bool:
        """Whether files of this format can be read and written by bands of rows (streaming)."""
        return self.reads_regions and self.writes_regions

    @property
    def reads_regions(self) -> bool:
        """Whether files of this format can be read by bands of rows (an input streamed, `oxi info --stats`)."""
        return self.can("region_reader") and self.can("region_blocker")

    @property
    def writes_regions(self) -> bool:
        """Whether files of this format can be written by bands of rows (an output streamed)."""
        return self.can("band_writer") and self.can("band_header")

    def function(self, role: str) -> Callable[..., Any]:
        """The role's function; a module named without a package is one of oxi_cli.io's."""
        return load(self.roles[role], package="oxi_cli.io")

    def call(self, role: str, *args: Any, **kwargs: Any) -> Any:
        return self.function(role)(*args, **kwargs)


FORMATS: dict[str, Format] = {}


REQUIRED = ("read", "read_spec", "write", "codec")


def register(fmt: Format) -> Format:
    """Make `fmt` known by its name and extensions (a later registration of the same name replaces it)."""
    missing = [role for role in REQUIRED if role not in fmt.roles]
    if missing:
        raise ValueError(f"format {fmt.name} lacks {', '.join(missing)}")
    FORMATS[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    FORMATS.pop(name, None)


def named(name: str) -> Format:
    return FORMATS[name]


def by_extension() -> dict[str, Format]:
    """Every known extension (lower case, with the dot) and its format."""
    return {ext: fmt for fmt in FORMATS.values() for ext in fmt.extensions}


def known_extensions() -> str:
    """The extensions for messages: '.exr, .png, .tif/.tiff, .jpg/.jpeg'."""
    return ", ".join("/".join(fmt.extensions) for fmt in FORMATS.values())


register(Format(
    "exr", "EXR", (".exr",), ("half", "float", "uint32"), keeps_windows=True,
    roles={"read": "exr:read", "read_spec": "exr:read_spec", "write": "exr_stream:write",
           "codec": "exr:parse_compression", "describe": "exr:describe",
           "region_blocker": "exr_stream:region_blocker", "region_reader": "exr_stream:region_reader",
           "band_writer": "exr_stream:band_writer", "band_header": "exr_stream:band_header",
           "band_notes": "exr_stream:band_notes"},
    any_channels=True, parts=True, codec_hint=" (EXR: a DWA level, --compression dwab:45)",
))
register(Format(
    "png", "PNG", (".png",), ("uint16", "uint8"), keeps_windows=False,
    roles={"read": "raster:read_png", "read_spec": "raster:read_png_spec", "write": "raster:write_png",
           "codec": "raster:png_codec", "region_blocker": "png_stream:region_blocker",
           "region_reader": "png_stream:region_reader", "band_writer": "png_stream:band_writer",
           "band_header": "png_stream:band_header", "band_notes": "png_stream:band_notes"},
))
register(Format(
    "tiff", "TIFF", (".tif", ".tiff"), ("float", "uint16", "uint8"), keeps_windows=False,
    roles={"read": "raster:read_tiff", "read_spec": "raster:read_tiff_spec", "write": "raster:write_tiff",
           "codec": "raster:tiff_codec", "region_blocker": "tiff_stream:region_blocker",
           "region_reader": "tiff_stream:region_reader"},
))
register(Format(
    "tx", "TIFF texture", (".tx",), ("float", "uint16", "uint8"), keeps_windows=False,
    roles={"read": "raster:read_tiff", "read_spec": "raster:read_tiff_spec", "write": "raster:write_tx",
           "codec": "raster:tiff_codec"},
))
register(Format(
    "jpeg", "JPEG", (".jpg", ".jpeg"), ("uint8",), keeps_windows=False,
    roles={"read": "raster:read_jpeg", "read_spec": "raster:read_jpeg_spec", "write": "raster:write_jpeg",
           "codec": "raster:jpeg_quality"},
    quality=True,
))
