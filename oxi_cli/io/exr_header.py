"""EXR headers checked by oxi before OpenEXR sees a file: every size in them is a claim until it fits the file."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from oxi_cli.errors import InputError
from oxi_cli.io.common import check_claim

MAGIC = b"\x76\x2f\x31\x01"
_TILED, _LONG_NAMES, _NON_IMAGE, _MULTIPART = 0x200, 0x400, 0x800, 0x1000
_KNOWN_FLAGS = _TILED | _LONG_NAMES | _NON_IMAGE | _MULTIPART
# oxi's limit on an image side (oxi resize has the same): a header claiming more is refused, whatever the file.
MAX_SIDE = 1 << 20
# Worst-case decoded/compressed ratio of each codec that has one (deflate tops out at 1032:1, OpenEXR's
# RLE at 127:2, B44A at 32:3 and PIZ's Huffman runs near 410:1), with margin. The others (DWA, HTJ2K,
# ZSTD) can shrink a flat image almost without limit, so only a generous bound catches a lie there.
_UNBOUNDED = 1 << 21
# code -> (name, scanlines per chunk, worst-case ratio); rows per chunk are the file format's (OpenEXR core's
# exr_compression_lines_per_chunk; tests/io/test_exr_header.py checks them against the installed OpenEXR).
CODECS: dict[int, tuple[str, int, int]] = {
    0: ("none", 1, 1),
    1: ("rle", 1, 64),
    2: ("zips", 1, 1100),
    3: ("zip", 16, 1100),
    4: ("piz", 32, 1024),
    5: ("pxr24", 16, 1400),
    6: ("b44", 32, 12),
    7: ("b44a", 32, 12),
    8: ("dwaa", 32, _UNBOUNDED),
    9: ("dwab", 256, _UNBOUNDED),
    10: ("htj2k256", 256, _UNBOUNDED),
    11: ("htj2k32", 32, _UNBOUNDED),
    12: ("lj2k", 256, _UNBOUNDED),
    13: ("zstd", 1, _UNBOUNDED),
}
PIXEL_TYPES = {0: "uint32", 1: "half", 2: "float"}
TYPE_BYTES = {"uint32": 4, "half": 2, "float": 4}
LINE_ORDERS = {0: "increasing", 1: "decreasing", 2: "random"}
IMAGE_TYPES = ("scanlineimage", "tiledimage", "deepscanline", "deeptile")
# Attributes whose values oxi reads, with their type and (when fixed) their size in bytes.
_PARSED = {
    "channels": ("chlist", None),
    "compression": ("compression", 1),
    "dataWindow": ("box2i", 16),
    "displayWindow": ("box2i", 16),
    "lineOrder": ("lineOrder", 1),
    "tiles": ("tiledesc", 9),
    "type": ("string", None),
    "name": ("string", None),
    "chunkCount": ("int", 4),
}
_REQUIRED = ("channels", "compression", "dataWindow", "displayWindow", "lineOrder")
_WINDOW = 1 << 16  # bytes read at a time while walking the header


class CorruptExr(Exception):
    """What is wrong with a header, in words for the one-line error."""


@dataclass
class Channel:
    type: str  # uint32, half or float
    x_sampling: int
    y_sampling: int


@dataclass
class PartHeader:
    """What oxi needs from one part's header, checked."""

    name: str | None = None
    type: str = "scanlineimage"
    channels: dict[str, Channel] = field(default_factory=dict)
    compression: int = 0
    data_window: tuple[int, int, int, int] = (0, 0, 0, 0)
    line_order: int = 0
    tiles: tuple[int, int, int, int] | None = None  # x size, y size, level mode, rounding mode
    chunk_count: int | None = None

    @property
    def width(self) -> int:
        return self.data_window[2] - self.data_window[0] + 1

    @property
    def height(self) -> int:
        return self.data_window[3] - self.data_window[1] + 1

    @property
    def level_mode(self) -> str:
        """"one", "mipmap" or "ripmap": the resolution levels a tiled part holds (scanline parts hold one)."""
        return ("one", "mipmap", "ripmap")[self.tiles[2]] if self.tiles is not None and self.tiles[2] < 3 else "one"

    @property
    def deep(self) -> bool:
        return self.type.startswith("deep")

    @property
    def tiled(self) -> bool:
        return self.type in ("tiledimage", "deeptile")

    def decoded_bytes(self) -> int:
        """Bytes of the first level's pixels once decoded (what OpenEXR allocates to read them)."""
        return sum(
            -(-self.width // c.x_sampling) * -(-self.height // c.y_sampling) * TYPE_BYTES[c.type]
            for c in self.channels.values()
        )


@dataclass
class ExrLayout:
    """A checked EXR: its parts' headers and where the pixel data starts and ends."""

    multipart: bool
    parts: list[PartHeader]
    table_start: int  # the first chunk offset table
    table_end: int  # the first byte after every part's offset table
    file_size: int


class _Reader:
    """Random access to the file through a small window: only what the header walk needs is read."""

    def __init__(self, f, size: int) -> None:
        self._f = f
        self.size = size
        self._base = 0
        self._buf = b""

    def bytes(self, pos: int, n: int) -> bytes:
        if pos + n > self.size:
            raise CorruptExr(f"the header runs past the end of the file ({self.size} bytes)")
        if not (self._base <= pos and pos + n <= self._base + len(self._buf)):
            self._f.seek(pos)
            self._buf = self._f.read(max(n, _WINDOW))
            self._base = pos
        at = pos - self._base
        return self._buf[at : at + n]

    def cstring(self, pos: int, limit: int) -> tuple[bytes, int]:
        """The NUL-terminated string at `pos` (at most `limit` bytes before the NUL) and the offset after it."""
        chunk = self.bytes(pos, min(limit + 1, self.size - pos))
        end = chunk.find(b"\0")
        if end < 0:
            raise CorruptExr("an attribute name or type has no end")
        return chunk[:end], pos + end + 1


def read_layout(path: Path) -> ExrLayout:
    """Parse and check the headers and chunk offset tables of `path`; InputError (one line) when they lie."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            reader = _Reader(f, size)
            layout = _layout(reader)
            _check_tables(reader, layout)
    except CorruptExr as e:
        raise InputError(f"{path}: the EXR file is truncated or corrupt ({e}); re-export or re-copy it") from None
    for part in layout.parts:
        _check_claims(path, part, layout)
    return layout


def _layout(reader: _Reader) -> ExrLayout:
    head = reader.bytes(0, 8)
    if head[:4] != MAGIC:
        raise CorruptExr("no EXR signature")
    version = int.from_bytes(head[4:8], "little")
    if version & 0xFF != 2 or version & ~0xFF & ~_KNOWN_FLAGS:
        raise CorruptExr(f"unknown EXR version or flags 0x{version:x}")
    multipart = bool(version & _MULTIPART)
    name_limit = 255 if version & _LONG_NAMES else 31
    parts: list[PartHeader] = []
    pos = 8
    while True:
        if multipart and parts and reader.bytes(pos, 1) == b"\0":
            pos += 1  # the empty header that ends a multi-part file's list
            break
        part, pos = _part(reader, pos, name_limit)
        _complete(part, version, multipart)
        parts.append(part)
        if not multipart:
            break
    return ExrLayout(multipart, parts, pos, pos, reader.size)


def _part(reader: _Reader, pos: int, name_limit: int) -> tuple[PartHeader, int]:
    part = PartHeader()
    seen: set[str] = set()
    while reader.bytes(pos, 1) != b"\0":
        raw_name, pos = reader.cstring(pos, name_limit)
        raw_type, pos = reader.cstring(pos, name_limit)
        (size,) = struct.unpack("<i", reader.bytes(pos, 4))
        pos += 4
        name, kind = raw_name.decode("latin-1"), raw_type.decode("latin-1")
        if not name or not kind:
            raise CorruptExr("an attribute has an empty name or type")
        # A negative or oversized size is how a header walk loops or reads past the end: refuse it.
        if size < 0 or pos + size > reader.size:
            raise CorruptExr(f"attribute {_shown(name)} claims {size} bytes")
        if name in _PARSED:
            _parse_value(part, name, kind, reader.bytes(pos, size))
        seen.add(name)
        pos += size
    missing = [name for name in _REQUIRED if name not in seen]
    if missing:
        raise CorruptExr(f"the header has no {', '.join(missing)}")
    return part, pos + 1


def _shown(name: str) -> str:
    return repr(name) if len(name) <= 31 and name.isprintable() else "(unprintable name)"


def _parse_value(part: PartHeader, name: str, kind: str, value: bytes) -> None:
    want, size = _PARSED[name]
    if kind != want or (size is not None and len(value) != size):
        raise CorruptExr(f"attribute {name} is a {len(value)}-byte {_shown(kind)}, not a {want}")
    if name == "channels":
        _channels(part, value)
    elif name == "compression":
        part.compression = value[0]
        if part.compression not in CODECS:
            raise CorruptExr(f"unknown compression code {part.compression}")
    elif name == "dataWindow":
        part.data_window = _window(value, "data")
    elif name == "displayWindow":
        _window(value, "display")
    elif name == "lineOrder":
        part.line_order = value[0]
        if part.line_order not in LINE_ORDERS:
            raise CorruptExr(f"unknown line order {part.line_order}")
    elif name == "tiles":
        x, y, mode = struct.unpack("<IIB", value)
        if not (1 <= x <= MAX_SIDE and 1 <= y <= MAX_SIDE) or mode & 0xF > 2 or mode >> 4 > 1:
            raise CorruptExr(f"invalid tile description ({x}x{y}, mode {mode})")
        part.tiles = (x, y, mode & 0xF, mode >> 4)
    elif name == "chunkCount":
        (part.chunk_count,) = struct.unpack("<i", value)
    else:  # name, type
        text = value.decode("latin-1")
        if name == "type":
            part.type = text
        else:
            part.name = text


def _window(value: bytes, which: str) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = struct.unpack("<iiii", value)
    width, height = x1 - x0 + 1, y1 - y0 + 1
    if width < 1 or height < 1:
        raise CorruptExr(f"the {which} window is empty ({width}x{height})")
    return x0, y0, x1, y1


def _channels(part: PartHeader, value: bytes) -> None:
    pos = 0
    while pos < len(value) and value[pos] != 0:
        end = value.find(b"\0", pos)
        if end < 0 or end + 17 > len(value):
            raise CorruptExr("the channel list is cut short")
        name = value[pos:end].decode("latin-1")
        code, _, xs, ys = struct.unpack_from("<i4sii", value, end + 1)
        if code not in PIXEL_TYPES:
            raise CorruptExr(f"channel {_shown(name)} has unknown pixel type {code}")
        if xs < 1 or ys < 1:
            raise CorruptExr(f"channel {_shown(name)} has sampling {xs}x{ys}")
        if name in part.channels:
            raise CorruptExr(f"channel {_shown(name)} is listed twice")
        part.channels[name] = Channel(PIXEL_TYPES[code], xs, ys)
        pos = end + 17
    if not part.channels:
        raise CorruptExr("the channel list is empty")


def _complete(part: PartHeader, version: int, multipart: bool) -> None:
    """Checks that need the whole part header: its type against the version flags, tiles, sizes."""
    if not multipart and not version & _NON_IMAGE:
        part.type = "tiledimage" if version & _TILED else "scanlineimage"
    if part.type not in IMAGE_TYPES:
        raise CorruptExr(f"unknown part type {_shown(part.type)}")
    if part.tiled and part.tiles is None:
        raise CorruptExr("a tiled part has no tile description")
    if multipart and part.chunk_count is None:
        raise CorruptExr("a part of a multi-part file has no chunkCount")
    if part.width > MAX_SIDE or part.height > MAX_SIDE:
        raise CorruptExr(f"the data window is {part.width}x{part.height}, beyond {MAX_SIDE} pixels a side")


def chunk_count(part: PartHeader) -> tuple[int, int]:
    """(chunks the part's offset table lists, how many of them hold the first level's pixels).

    Scanline parts have one level. Tiled parts list the tiles of every mip or rip level; writers may leave
    the levels past the first unwritten (the Python binding does), so only the first level's are required.
    """
    if not part.tiled:
        rows = CODECS[part.compression][1]
        count = -(-part.height // rows)
        return (part.chunk_count if part.chunk_count is not None else count), count
    assert part.tiles is not None
    tx, ty, mode, rounding = part.tiles
    w, h = part.width, part.height
    if mode == 0:
        levels = [(0, 0)]
    elif mode == 1:
        levels = [(n, n) for n in range(_round_log2(max(w, h), rounding) + 1)]
    else:
        levels = [(lx, ly) for ly in range(_round_log2(h, rounding) + 1) for lx in range(_round_log2(w, rounding) + 1)]
    tiles = [-(-_level_size(w, lx, rounding) // tx) * -(-_level_size(h, ly, rounding) // ty) for lx, ly in levels]
    return (part.chunk_count if part.chunk_count is not None else sum(tiles)), tiles[0]


def _round_log2(x: int, rounding: int) -> int:
    return (x - 1).bit_length() if rounding else x.bit_length() - 1


def _level_size(size: int, level: int, rounding: int) -> int:
    return max(1, -(-size // (1 << level)) if rounding else size >> level)


def _leader_bytes(part: PartHeader, multipart: bool) -> int:
    """Bytes before a chunk's data: (part,) y or tile coordinates, then the packed size."""
    return (4 if multipart else 0) + (20 if part.tiled else 8)


def _check_tables(reader: _Reader, layout: ExrLayout) -> None:
    """Every chunk offset must point inside the file, and the last chunk must end before the file does."""
    pos = layout.table_start
    for part in layout.parts:
        count, required = chunk_count(part)
        if count < required:
            raise CorruptExr(f"chunkCount {count} is less than the {required} chunks its data window needs")
        if pos + 8 * count > reader.size:
            raise CorruptExr(f"its chunk offset table ({count} entries) does not fit in the file")
        offsets = np.frombuffer(reader.bytes(pos, 8 * count), dtype="<u8")
        pos += 8 * count
        if not part.deep:
            _check_offsets(reader, offsets, required, layout.table_start, _leader_bytes(part, layout.multipart))
    layout.table_end = pos


def _check_offsets(reader: _Reader, offsets: np.ndarray, required: int, start: int, leader: int) -> None:
    inside = (offsets >= start) & (offsets <= reader.size - leader)
    # Chunks past the first level may be absent (offset 0); the first level's must all be there.
    bad = np.flatnonzero(~inside & ((np.arange(offsets.size) < required) | (offsets != 0)))
    if bad.size:
        raise CorruptExr(f"chunk {bad[0]} of {offsets.size} lies outside the file; it is incomplete")
    last = int(offsets[inside].max())
    (packed,) = struct.unpack("<i", reader.bytes(last + leader - 4, 4))
    if packed < 0 or last + leader + packed > reader.size:
        raise CorruptExr(f"its last chunk ends past the end of the file ({reader.size} bytes)")


def _check_claims(path: Path, part: PartHeader, layout: ExrLayout) -> None:
    """The decoded pixels must fit what the file's bytes can expand to with the part's codec."""
    if not part.deep:
        name, _, ratio = CODECS[part.compression]
        stored = max(0, layout.file_size - layout.table_end)
        check_claim(path, "EXR", part.width, part.height, part.decoded_bytes(), stored, ratio, name)
