"""EXR by regions: read scanline bands (of scanline or tiled files) and write scanline bands incrementally;
whole one-part files are written here too, where oxi's chunk writer can take them (write()).

OpenEXR 3.5's own API decodes and encodes whole files only, so bands go through its legacy `InputFile` /
`OutputFile` classes (NOTES §3); this module is the one place that knows it. The legacy writer can only
express some attribute types and mishandles bottom-up line order, so the band writer writes the pixels
under a stand-in header of exactly the final header's size and, when done, puts the header that the
whole-image writer (io/exr.py, new API) produces for the same image over it: the chunk offsets stay valid
and the output's attributes are the ones a single-pass run writes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import Imath
import numpy as np
import OpenEXR

from oxi_cli.errors import InputError, ProcessingError, UsageError
from oxi_cli.image import PIXEL_DTYPES, Image, ImageMeta
from oxi_cli.io import exr
from oxi_cli.io.common import ImageSpec, check_readable, one_line, pixel_type_of

_PIXEL_CODES = {"uint32": Imath.PixelType.UINT, "half": Imath.PixelType.HALF, "float": Imath.PixelType.FLOAT}
_PAD_NAME = b"oxi:pad"
_STRING_ATTR_OVERHEAD = len(_PAD_NAME) + 1 + len(b"string") + 1 + 4  # name, type, size field


def _window(header: dict[str, Any]) -> tuple[int, int, int, int]:
    (x0, y0), (x1, y1) = header["dataWindow"]
    return int(x0), int(y0), int(x1), int(y1)


def region_blocker(path: Path) -> str | None:
    """Why this EXR cannot be read by regions (None when it can): multi-part files go whole."""
    path = Path(path)
    check_readable(path)
    if exr.check_magic(path):
        return "a multi-part EXR is read and written whole (the band writer writes one part)"
    return None


class ExrRegionReader:
    """Scanline bands of an EXR's first part, rows counted from the data window's top (0-based).

    Tiled files work too: OpenEXR decodes only the tiles that cover the rows asked for.
    """

    fresh = True  # every band is newly decoded: the executor may compute in it

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.spec: ImageSpec = exr.read_spec(self.path)
        self.width, self.height = self.spec.width, self.spec.height
        self._y0 = _window(self.spec.meta.header)[1]
        tiles = self.spec.meta.header.get("tiles")
        self.row_step = int(tiles.ySize) if tiles is not None else 1  # whole tile rows decode each tile once
        self._dtypes = {name: PIXEL_DTYPES[self.spec.meta.pixel_types[name]] for name in self.spec.channels}
        error: BaseException | None = None
        complete = False
        with exr.native_messages() as lines:
            try:
                self._file = OpenEXR.InputFile(str(self.path))
                # A truncated file is found now, before any band is decoded or written.
                complete = bool(self._file.isComplete())
            except MemoryError:  # the header was checked: this is the machine, not the file
                raise
            except Exception as e:
                error = e
        if error is not None or not complete:
            raise InputError(
                f"{self.path}: the EXR file is truncated or corrupt ({exr.native_detail(lines, error)}); "
                "re-export or re-copy it"
            )

    def read_rows(self, start: int, stop: int, *, widen: bool = False) -> dict[str, np.ndarray]:
        """Rows [start, stop) of every channel, each (stop - start, width) in the file's pixel type.

        With `widen`, half channels come as float32, converted by OpenEXR while decoding (faster than numpy).
        """
        if not 0 <= start < stop <= self.height:
            raise ProcessingError(f"rows {start}..{stop} lie outside {self.path}'s {self.height} rows")
        names = self.spec.channels
        if not widen:
            return self._decode(names, None, self._dtypes, start, stop)
        uints = [n for n in names if self._dtypes[n] == np.uint32]
        floats = [n for n in names if n not in uints]
        as_float = Imath.PixelType(Imath.PixelType.FLOAT)
        out = self._decode(floats, as_float, dict.fromkeys(floats, np.float32), start, stop)
        as_uint = Imath.PixelType(Imath.PixelType.UINT)
        return {**out, **self._decode(uints, as_uint, self._dtypes, start, stop)}

    def _decode(
        self, names: list[str], pixel_type: Any, dtypes: dict[str, Any], start: int, stop: int
    ) -> dict[str, np.ndarray]:
        if not names:
            return {}
        error: BaseException | None = None
        with exr.native_messages() as lines:
            try:
                rows = {"scanLine1": self._y0 + start, "scanLine2": self._y0 + stop - 1}
                typed = (pixel_type,) if pixel_type else ()  # none given: each channel's own type
                raw = self._file.channels(names, *typed, **rows)
            except MemoryError:  # the header was checked: this is the machine, not the file
                raise
            except Exception as e:  # OpenEXR raises OSError with its own text for damaged chunks
                error = e
        if error is not None:
            raise InputError(f"{self.path}: cannot decode rows {start}..{stop - 1} "
                             f"({exr.native_detail(lines, error)}); the file is corrupt: re-export or re-copy it")
        return {
            name: np.frombuffer(data, dtype=dtypes[name]).reshape(stop - start, self.width)
            for name, data in zip(names, raw, strict=True)
        }

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._file.close()

    def __enter__(self) -> ExrRegionReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def band_header(
    meta: ImageMeta, width: int, height: int, compression: str | None = None
) -> dict[str, Any]:
    """The header a single-pass run writes (exr.output_header), as a one-part scanline file, top to bottom."""
    header = exr.output_header(meta, width, height, compression)
    header.pop("tiles", None)
    header["type"] = OpenEXR.scanlineimage
    header["lineOrder"] = OpenEXR.INCREASING_Y
    return header


def _header_end(data: bytes) -> list[tuple[bytes, bytes, int, int]] | None:
    """(name, type, value offset, value size) of each attribute of a one-part file; None if cut short.

    The last entry is (b"", b"", end, 0), `end` being the offset just past the header's closing null.
    """
    attrs = []
    pos = 8
    try:
        while data[pos] != 0:
            end = data.index(b"\0", pos)
            name = data[pos:end]
            tend = data.index(b"\0", end + 1)
            kind = data[end + 1 : tend]
            size = int.from_bytes(data[tend + 1 : tend + 5], "little", signed=True)
            if size < 0 or len(data[tend + 1 : tend + 5]) < 4:  # cut short, or a size that would walk backwards
                raise IndexError
            attrs.append((name, kind, tend + 5, size))
            pos = tend + 5 + size
    except (IndexError, ValueError):
        return None
    attrs.append((b"", b"", pos + 1, 0))
    return attrs


def _read_prefix(path: Path) -> tuple[bytes, list[tuple[bytes, bytes, int, int]]]:
    with open(path, "rb") as f:
        data = f.read(1 << 16)
        while (attrs := _header_end(data)) is None:
            more = f.read(1 << 20)
            if not more:
                raise ProcessingError(f"{path}: the EXR header written by OpenEXR does not parse")
            data += more
    return data[: attrs[-1][2]], attrs


def _box_bytes(x0: int, y0: int, x1: int, y1: int) -> bytes:
    return np.array([x0, y0, x1, y1], dtype="<i4").tobytes()


class ExrBandWriter:
    """Writes `height` rows to `path` in bands, top to bottom; `close()` completes the file.

    `path` is the caller's temporary (io.atomic.atomic_output gives one); `name` is what errors call the
    output. `header` comes from band_header(); `pixel_types` maps each channel to half, float or uint32.
    """

    def __init__(
        self, path: str | Path, header: dict[str, Any], pixel_types: dict[str, str], *, name: str | Path | None = None
    ) -> None:
        self.path = Path(path)
        self.name = str(name or path)
        for channel, kind in pixel_types.items():
            if kind not in exr.EXR_TYPES:
                raise UsageError(
                    f"EXR stores half, float or uint32 channels, not {kind} (channel {channel}); "
                    "use --out-type half or float"
                )
        self.types = dict(pixel_types)
        x0, y0, x1, y1 = _window(header)
        self.width, self.height = x1 - x0 + 1, y1 - y0 + 1
        self.rows_written = 0
        self._box = _box_bytes(x0, y0, x1, y1)
        self._prefix = self._final_prefix(header)
        stand_in = self._stand_in(header, len(self._prefix))
        self._out = self._call(lambda: OpenEXR.OutputFile(str(self.path), stand_in))

    def _call(self, fn: Any) -> Any:
        try:
            return fn()
        except OSError as e:
            raise ProcessingError(f"cannot write {self.name}: {e.strerror or one_line(e)}") from None
        except Exception as e:
            raise ProcessingError(f"cannot write {self.name}: {one_line(e)}") from None

    def _final_prefix(self, header: dict[str, Any]) -> bytes:
        return header_prefix(header, self.types, self.name)

    def _stand_in(self, header: dict[str, Any], size: int) -> dict[str, Any]:
        """A legacy-API header that lays the chunks out as the final one would, padded to `size` bytes."""
        x0, y0, x1, y1 = _window(header)
        (dx0, dy0), (dx1, dy1) = header["displayWindow"]
        legacy: dict[str, Any] = {
            "channels": {n: Imath.Channel(Imath.PixelType(_PIXEL_CODES[k])) for n, k in self.types.items()},
            "compression": Imath.Compression(int(header["compression"])),
            "dataWindow": Imath.Box2i(Imath.point(x0, y0), Imath.point(x1, y1)),
            "displayWindow": Imath.Box2i(Imath.point(int(dx0), int(dy0)), Imath.point(int(dx1), int(dy1))),
            "lineOrder": Imath.LineOrder(Imath.LineOrder.INCREASING_Y),
        }
        if exr.DWA_LEVEL in header:  # the chunks must be compressed at the level the final header states
            legacy[exr.DWA_LEVEL] = float(header[exr.DWA_LEVEL])
        bare = self._legacy_size(legacy)
        pad = size - bare - _STRING_ATTR_OVERHEAD
        if pad < 0 and size != bare:
            raise ProcessingError(
                f"cannot write {self.name} in bands: its header ({size} bytes) is shorter than the stand-in "
                f"({bare} bytes); use --strategy single"
            )
        if size != bare:
            legacy[_PAD_NAME.decode()] = b"x" * pad  # bytes become a string attribute; no NULs inside
        return legacy

    def _legacy_size(self, legacy: dict[str, Any]) -> int:
        """Bytes up to the end of the header the legacy writer writes for `legacy`."""
        with tempfile.TemporaryDirectory(prefix="oxi-hdr-") as scratch:
            probe = Path(scratch) / "legacy.exr"
            self._call(lambda: OpenEXR.OutputFile(str(probe), legacy).close())
            return len(_read_prefix(probe)[0])

    def write_rows(self, planes: dict[str, np.ndarray]) -> None:
        """The next rows, top to bottom: each channel (rows, width) in its pixel type, C-contiguous."""
        rows = None
        data = {}
        for name, kind in self.types.items():
            plane = planes[name]
            if plane.dtype != PIXEL_DTYPES[kind] or plane.ndim != 2 or plane.shape[1] != self.width:
                raise ProcessingError(
                    f"band for channel {name} is {plane.dtype} {plane.shape}, not {kind} (rows, {self.width})"
                )
            if rows is None:
                rows = plane.shape[0]
            elif plane.shape[0] != rows:
                raise ProcessingError(f"band channels differ in height ({rows} vs {plane.shape[0]} rows)")
            data[name] = np.ascontiguousarray(plane)
        if not rows:
            return
        if self.rows_written + rows > self.height:
            raise ProcessingError(
                f"{self.name}: {self.rows_written + rows} rows written into a {self.height}-row image"
            )
        self._call(lambda: self._out.writePixels(data, rows))
        self.rows_written += rows

    def close(self) -> None:
        """Finish the file: every row must be written. Then the final header replaces the stand-in."""
        self._call(self._out.close)
        if self.rows_written != self.height:
            raise ProcessingError(f"{self.name}: only {self.rows_written} of {self.height} rows were written")
        with open(self.path, "r+b") as f:
            written = _header_end(f.read(len(self._prefix) + 1))
            if written is None or written[-1][2] != len(self._prefix):
                raise ProcessingError(f"cannot write {self.name}: the stand-in header has the wrong size")
            f.seek(0)
            f.write(self._prefix)
            f.flush()
            os.fsync(f.fileno())

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._out.close()


def header_prefix(header: dict[str, Any], pixel_types: dict[str, str], name: str | Path) -> bytes:
    """Magic, version and header exactly as the whole-image writer writes them for this image.

    OpenEXR.File writes only whole images, so it writes a one-row image with this header into a
    scratch folder; the data window's value (a fixed 16 bytes) is then set to the real one.
    """
    x0, y0, x1, y1 = _window(header)
    width = x1 - x0 + 1
    row = (np.array([x0, y0], np.int32), np.array([x1, y0], np.int32))
    one_row = {**header, "dataWindow": row}
    planes = {n: np.zeros((1, width), dtype=PIXEL_DTYPES[k]) for n, k in pixel_types.items()}
    with tempfile.TemporaryDirectory(prefix="oxi-hdr-") as scratch:
        tiny = Path(scratch) / "header.exr"
        with exr.native_messages() as lines:
            try:
                OpenEXR.File(one_row, planes).write(str(tiny))
            except Exception as e:
                raise ProcessingError(f"cannot write {name}: {exr.native_detail(lines, e)}") from None
        prefix, attrs = _read_prefix(tiny)
    out = bytearray(prefix)
    for attr, kind, offset, size in attrs:
        if attr == b"dataWindow" and kind == b"box2i" and size == 16:
            out[offset : offset + 16] = _box_bytes(x0, y0, x1, y1)
        elif attr == b"chunkCount":
            raise ProcessingError(f"cannot write {name} in bands: OpenEXR wrote a chunkCount attribute")
    return bytes(out)


def header_bytes(path: str | Path) -> int:
    """Length of a one-part file's magic, version and header: where its chunk offset table starts."""
    return len(_read_prefix(Path(path))[0])


# Chunks handed to the chunk writer at a time: enough to keep every core busy, few enough that the file takes
# them as they finish rather than all at close. Files of fewer chunks go to OpenEXR: the chunk writer's header
# (a one-row file OpenEXR writes) costs ~1 ms, more than it saves on a 256² image.
_CHUNKS_PER_BAND = 64


def chunk_writer(
    path: Path, header: dict[str, Any], pixel_types: dict[str, str], name: str | Path, min_chunks: int = 1
) -> Any:
    """oxi's chunk writer (io/exr_chunks.py) for a one-part file with this header, where it covers the codec
    (NONE, ZIPS, ZIP scanlines) and the file has `min_chunks` chunks or more; else None."""
    from oxi_cli.io.exr_chunks import ExrChunkWriter, layout_for

    layout = layout_for(header, pixel_types)
    if layout is None or layout.count < min_chunks:
        return None
    return ExrChunkWriter(path, header_prefix(header, pixel_types, name), layout, name=name)


def write(image: Image, path: Path, compression: str | None = None) -> None:
    """Write `image` as EXR at `path` (the caller's temporary), like the file it came from: a one-part NONE, ZIPS
    or ZIP scanline file through oxi's chunk writer (the same bytes as OpenEXR's whole-file writer, 10-25 %
    faster on a 2-core x86-64 machine (AVX-512): docs/BENCHMARKS.md, session 7), any other through OpenEXR's."""
    parts = exr.prepared(image, compression)
    header, planes = parts[0]
    types = {name: pixel_type_of(plane) for name, plane in planes.items()}
    writer = None
    if len(parts) == 1:
        with contextlib.suppress(ProcessingError):  # a header it cannot reproduce: OpenEXR writes (or refuses) it
            writer = chunk_writer(path, header, types, path, min_chunks=_CHUNKS_PER_BAND)
    if writer is None:
        exr.write_parts(parts, path)
        return
    step = writer.layout.lines * _CHUNKS_PER_BAND
    try:
        for start in range(0, writer.layout.height, step):
            writer.write_rows({name: plane[start : start + step] for name, plane in planes.items()})
        writer.close()
    except BaseException:
        writer.abort()
        raise


def region_reader(path: Path) -> Any:
    """Bands of rows of an EXR: oxi's own chunk-parallel, GIL-free reader where the file's codec allows it, else
    OpenEXR's (io/formats.py's "region_reader")."""
    from oxi_cli.io.exr_chunks import ExrChunkReader, layout_for

    reader = ExrRegionReader(path)  # checks the file whole (truncation) and reads its spec
    layout = layout_for(reader.spec.meta.header, reader.spec.meta.pixel_types)
    if layout is None:
        return reader
    reader.close()
    return ExrChunkReader(path, layout, header_bytes(path), reader.spec)


def band_writer(tmp: Path, header: dict[str, Any], types: dict[str, str], name: Path) -> Any:
    """Bands of rows into an EXR: oxi's own chunk writer where the output codec allows it, else OpenEXR's legacy
    band writer (io/formats.py's "band_writer")."""
    return chunk_writer(tmp, header, types, name) or ExrBandWriter(tmp, header, types, name=name)


def band_notes(spec: ImageSpec) -> list[str]:
    """What writing this EXR by bands changes about how it is stored (io/formats.py's "band_notes")."""
    header = spec.meta.header
    notes = []
    if "tiles" in header:
        notes.append("the tiled input is written as scanlines (OpenEXR's band writer cannot write tiles)")
    if getattr(header.get("lineOrder"), "name", "") == "DECREASING_Y":
        notes.append("lineOrder DECREASING_Y is written as INCREASING_Y (bands are written top to bottom)")
    return notes
