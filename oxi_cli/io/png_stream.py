"""PNG by bands of rows: read a band at a time (the zlib stream inflated as far as the band, libpng unfiltering it
with the row above as its first row) and write a band at a time (Sub filter, zlib, one IDAT chunk per band)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from oxi_cli.errors import ProcessingError
from oxi_cli.image import PIXEL_DTYPES, ImageMeta
from oxi_cli.io.common import ImageSpec, convert_plane
from oxi_cli.io.raster import PNG_ENCODING, PNG_SIGNATURE, _corrupt, _png_has_trns, layout_for, png_codec, read_png_spec

_COLOUR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type (gray, gray+alpha, RGB, RGBA)
_READ_AHEAD = 1 << 20  # compressed bytes read from the file at a time


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _ihdr(path: Path) -> tuple[int, int, int, int, int]:
    """width, height, bit depth, colour type and interlace method (read_png_spec has checked them)."""
    with open(path, "rb") as f:
        head = f.read(29)
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", head[16:29])
    return width, height, depth, colour, interlace


def region_blocker(path: Path) -> str | None:
    """Why this PNG is read whole (None when it can be read by bands): bands need rows stored as they decode, at
    8 or 16 bits a sample, one after the other."""
    _, _, depth, colour, interlace = _ihdr(path)
    if interlace:
        return "an interlaced (Adam7) PNG is read whole"
    if colour == 3:
        return "a palette PNG is read whole"
    if depth < 8:
        return f"a {depth}-bit PNG is read whole"
    with open(path, "rb") as f:
        f.seek(33)
        if _png_has_trns(f):
            return "a PNG with a tRNS transparency chunk is read whole"
    return None


class PngRegionReader:
    """Bands of rows of an 8/16-bit non-interlaced PNG, in order (a band may start inside the one before, for a
    filter's halo; an earlier start decodes the file again from its top)."""

    fresh = False  # the last band is kept for the next: the chain must not compute in it
    row_step = 1

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.spec: ImageSpec = read_png_spec(self.path)
        self.width, self.height = self.spec.width, self.spec.height
        _, _, self._depth, self._colour, _ = _ihdr(self.path)
        self._samples = len(self.spec.channels)
        self._row_bytes = self.width * self._samples * self._depth // 8
        self._file: BinaryIO | None = None
        self._start()

    def _start(self) -> None:
        self.close()
        self._file = open(self.path, "rb")  # noqa: SIM115 - held across bands, closed by close()
        self._file.seek(8)
        self._inflate = zlib.decompressobj()
        self._filtered = bytearray()  # inflated bytes not yet made rows
        self._left = 0  # bytes left in the IDAT chunk being read
        self._next = 0  # the next row the stream gives
        self._last: bytes | None = None  # the row before `_next`, unfiltered, as stored
        self._kept: dict[str, np.ndarray] = {}  # the last band returned, for a next band that starts inside it
        self._kept_start = 0

    def _inflated(self, size: int) -> bytes:
        """The next `size` inflated bytes (filter bytes and rows) of the image data."""
        assert self._file is not None
        while len(self._filtered) < size:
            if self._inflate.unconsumed_tail:  # input held back so as not to inflate past the band
                self._inflate_some(self._inflate.unconsumed_tail, size)
                continue
            if self._left == 0:
                head = self._file.read(8)
                if len(head) < 8:
                    raise _corrupt(self.path, "PNG", f"the image data ends before row {self._next}")
                length, kind = struct.unpack(">I4s", head)
                if kind != b"IDAT":
                    if self._filtered or self._next or kind == b"IEND":
                        raise _corrupt(self.path, "PNG", f"the image data ends before row {self._next}")
                    self._file.seek(length + 4, 1)  # an ancillary chunk before the data
                    continue
                self._left = length
            data = self._file.read(min(self._left, _READ_AHEAD))
            if not data:
                raise _corrupt(self.path, "PNG", "the file is truncated")
            self._left -= len(data)
            if self._left == 0:
                self._file.read(4)  # the chunk's CRC
            self._inflate_some(data, size)
        out = bytes(self._filtered[:size])
        del self._filtered[:size]
        return out

    def _inflate_some(self, data: bytes, size: int) -> None:
        """Inflate `data` no further than `size` bytes are held: a flat image inflates a thousandfold."""
        try:
            self._filtered += self._inflate.decompress(data, max(size - len(self._filtered), 1))
        except zlib.error as e:
            raise _corrupt(self.path, "PNG", e) from None

    def _decode(self, count: int) -> np.ndarray:
        """The next `count` rows, (count, width, samples): libpng unfilters them, the row above given as its first
        row (stored unfiltered), so each band costs its own rows only."""
        import imagecodecs

        data = self._inflated(count * (1 + self._row_bytes))
        lead = b"" if self._last is None else b"\x00" + self._last
        rows = count + (self._last is not None)
        ihdr = struct.pack(">IIBBBBB", self.width, rows, self._depth, self._colour, 0, 0, 0)
        band = PNG_SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(lead + data, 0)) \
            + _chunk(b"IEND", b"")
        try:
            pixels = imagecodecs.png_decode(band)
        except MemoryError:
            raise
        except Exception as e:
            raise _corrupt(self.path, "PNG", f"rows {self._next}..{self._next + count - 1}: {e}") from None
        pixels = pixels.reshape(rows, self.width, self._samples)[rows - count :]
        stored = pixels[-1].astype(">u2") if self._depth == 16 else pixels[-1]
        self._last = stored.tobytes()
        self._next += count
        return pixels

    def read_rows(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Rows [start, stop) of every channel, each (stop - start, width) in the file's pixel type. The last band
        is kept (it covers the rows up to the stream's position) for a next band that starts inside it."""
        if not 0 <= start < stop <= self.height:
            raise ProcessingError(f"rows {start}..{stop} lie outside {self.path}'s {self.height} rows")
        if start < self._kept_start:
            self._start()
        if start >= self._next:
            for skip in range(self._next, start, 256):  # rows before the band: decoded, then dropped
                self._decode(min(256, start - skip))
            band = self._decode(stop - start)
            self._kept = {name: band[..., i] for i, name in enumerate(self.spec.channels)}
            self._kept_start = start
        elif stop > self._next:
            band = self._decode(stop - self._next)
            self._kept = {name: np.concatenate([kept[start - self._kept_start :], band[..., i]])
                          for i, (name, kept) in enumerate(self._kept.items())}
            self._kept_start = start
        return {name: kept[start - self._kept_start : stop - self._kept_start] for name, kept in self._kept.items()}

    def close(self) -> None:
        if getattr(self, "_file", None) is not None:
            self._file.close()  # type: ignore[union-attr]
            self._file = None

    def __enter__(self) -> PngRegionReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def region_reader(path: Path) -> PngRegionReader:
    """io/formats.py's "region_reader" for PNG."""
    return PngRegionReader(path)


def band_header(meta: ImageMeta, width: int, height: int, compression: str | None = None) -> dict[str, Any]:
    """What a single pass would write (raster.write_png's channels and type), for the band writer."""
    png_codec(compression)
    names, kind = layout_for(dict(meta.pixel_types), meta, "png")
    return {"width": width, "height": height, "names": names, "kind": kind}


def band_notes(spec: ImageSpec) -> list[str]:
    return []


class PngBandWriter:
    """A PNG written band by band: the single pass's Sub filter and zlib settings, one IDAT chunk per band."""

    def __init__(self, tmp: Path, header: dict[str, Any], name: Path) -> None:
        self.name, self.names, self.kind = name, header["names"], header["kind"]
        self.depth = 16 if self.kind == "uint16" else 8
        self._bpp = len(self.names) * self.depth // 8
        self._file = open(tmp, "wb")  # noqa: SIM115 - closed by close() or abort()
        ihdr = struct.pack(">IIBBBBB", header["width"], header["height"], self.depth,
                           _COLOUR_TYPES[len(self.names)], 0, 0, 0)
        self._file.write(PNG_SIGNATURE + _chunk(b"IHDR", ihdr))
        self._deflate = zlib.compressobj(PNG_ENCODING["level"], zlib.DEFLATED, 15, 8, zlib.Z_RLE)

    def write_rows(self, planes: dict[str, np.ndarray]) -> None:
        dtype = PIXEL_DTYPES[self.kind]
        rows = np.stack([convert_plane(planes[name], self.kind).astype(dtype, copy=False) for name in self.names],
                        axis=-1)
        stored = rows.astype(">u2") if self.depth == 16 else rows
        raw = stored.reshape(rows.shape[0], -1).view(np.uint8)
        filtered = np.empty((raw.shape[0], raw.shape[1] + 1), dtype=np.uint8)
        filtered[:, 0] = 1  # Sub: each byte less the byte of the pixel before it
        filtered[:, 1 : 1 + self._bpp] = raw[:, : self._bpp]
        np.subtract(raw[:, self._bpp :], raw[:, : -self._bpp], out=filtered[:, 1 + self._bpp :])
        self._idat(self._deflate.compress(filtered.tobytes()))

    def _idat(self, data: bytes) -> None:
        if data:
            self._file.write(_chunk(b"IDAT", data))

    def close(self) -> None:
        self._idat(self._deflate.flush())
        self._file.write(_chunk(b"IEND", b""))
        self._file.close()

    def abort(self) -> None:
        self._file.close()


def band_writer(tmp: Path, header: dict[str, Any], types: dict[str, str], name: Path) -> PngBandWriter:
    """io/formats.py's "band_writer" for PNG."""
    return PngBandWriter(tmp, header, name)
