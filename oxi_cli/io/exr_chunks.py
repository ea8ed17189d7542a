"""EXR scanline chunks (NONE, ZIPS, ZIP) decoded and encoded by oxi itself, chunk-parallel and GIL-free.

OpenEXR's binding reads and writes bands only through its legacy classes, which hold the GIL for a whole
call (NOTES §3): on many cores every other stage of a band pipeline then waits on them. The ZIP family is
simple enough to do here: each chunk is zlib data (libdeflate through imagecodecs, which releases the GIL)
of byte-reordered, delta-coded scanlines (imagecodecs' delta coding, GIL-free too); chunks run on a pool of
threads. Header bytes always come from OpenEXR (exr_stream does that): this module only moves pixels.
Files it does not cover (tiled, multi-part, subsampled, other codecs) stay with exr_stream.
"""

from __future__ import annotations

import os
import struct
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from oxi_cli.errors import InputError, ProcessingError
from oxi_cli.host import cores

# Scanlines per chunk of the codecs handled here (OpenEXR's ImfCompression.h).
LINES_PER_CHUNK = {"none": 1, "zips": 1, "zip": 16}
# Bands whose chunks may still be encoding once write_rows returns (the planner counts them: plan.py).
_BANDS_ENCODING = 1
_ZLIB_LEVEL = 4  # OpenEXR's default zip level: the same size/speed trade users get from oiiotool
_BYTES = {"half": 2, "float": 4, "uint32": 4}
_DTYPES = {"half": np.dtype("<f2"), "float": np.dtype("<f4"), "uint32": np.dtype("<u4")}


@dataclass(frozen=True)
class ChunkLayout:
    """Where the bytes of each scanline chunk go: channels in file (alphabetical) order."""

    width: int
    height: int
    y0: int  # data window top: chunk headers carry absolute y
    channels: tuple[tuple[str, str], ...]  # (name, pixel type)
    compression: str

    @property
    def lines(self) -> int:
        return LINES_PER_CHUNK[self.compression]

    @property
    def row_bytes(self) -> int:
        return self.width * sum(_BYTES[kind] for _, kind in self.channels)

    @property
    def count(self) -> int:
        return -(-self.height // self.lines)

    def rows_of(self, k: int) -> tuple[int, int]:
        return k * self.lines, min(self.height, (k + 1) * self.lines)


def _codec(header: dict[str, Any]) -> str | None:
    import OpenEXR

    names = {OpenEXR.NO_COMPRESSION: "none", OpenEXR.ZIPS_COMPRESSION: "zips", OpenEXR.ZIP_COMPRESSION: "zip"}
    return names.get(header.get("compression"))


def layout_for(header: dict[str, Any], pixel_types: dict[str, str]) -> ChunkLayout | None:
    """The layout of a one-part scanline file with this header (as OpenEXR's binding gives it), or None when
    this module cannot handle it."""
    compression = _codec(header)
    if compression is None or "tiles" in header:
        return None
    if any(kind not in _BYTES for kind in pixel_types.values()):
        return None
    line_order = header.get("lineOrder")
    if line_order is not None and int(getattr(line_order, "value", line_order)) not in (0, 1):
        return None  # RANDOM_Y: chunks may come in any order, but then the offset table still works
    (x0, y0), (x1, y1) = header["dataWindow"]
    return ChunkLayout(int(x1) - int(x0) + 1, int(y1) - int(y0) + 1, int(y0),
                       tuple(sorted(pixel_types.items())), compression)


# --- the byte filters (OpenEXR's ImfZip.cpp): reorder into two halves, then code each byte as a delta ---


def _undelta(t: np.ndarray) -> None:
    """Undo EXR's ZIP predictor in `t`, in place: each byte a delta + 128 from the one before. imagecodecs'
    running sum, not Numba: a streamed read must not wait for Numba's import, which a single pass overlaps
    with OpenEXR's decoding (0.5 s of an 8K band job on 16 cores); numpy's cumsum would hold the GIL."""
    import imagecodecs

    np.subtract(t[1:], np.uint8(128), out=t[1:])  # wraps mod 256, as the running sum does
    imagecodecs.delta_decode(t, out=t)


def _halves(t: np.ndarray, layout: ChunkLayout, lines: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per channel, views of its even and odd bytes, (lines, width * bytes per sample / 2) each, in a chunk `t`
    of `lines` lines stored in EXR's order: every even byte of its rows, then every odd one. Bytes move
    between these and the planes with no interleaved copy of the chunk between."""
    half = t.shape[0] // 2  # rows are whole samples of 2 or 4 bytes: a chunk's size is even
    even = t[:half].reshape(lines, layout.row_bytes // 2)
    odd = t[half:].reshape(lines, layout.row_bytes // 2)
    out, col = [], 0
    for _, kind in layout.channels:
        span = layout.width * _BYTES[kind] // 2
        out.append((even[:, col : col + span], odd[:, col : col + span]))
        col += span
    return out


def _split_into(rows: list[np.ndarray], layout: ChunkLayout, split: np.ndarray) -> None:
    """A chunk's rows of every channel into `split` in EXR's order (even bytes, then odd ones)."""
    lines = rows[0].shape[0]
    for plane, (even, odd) in zip(rows, _halves(split, layout, lines), strict=True):
        pairs = plane.view(np.uint8).reshape(lines, even.shape[1], 2)
        even[:] = pairs[:, :, 0]
        odd[:] = pairs[:, :, 1]


_SCRATCH = threading.local()


def _scratch(nbytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, bytearray]:
    """This pool thread's buffers for one chunk: its rows, their split bytes, the filtered bytes (a read
    inflates into these) and room for the compressed ones. Fresh ones per chunk cost page faults that the
    pool's threads took in turn (pool time of a 4K half write on the 16-core box: 83-91 ms with fresh
    buffers, 74-78 reused)."""
    held = getattr(_SCRATCH, "buffers", None)
    if held is None or held[0].size < nbytes:
        room = bytearray(8 + nbytes + nbytes // 8 + 1024)  # header, and deflate's worst case
        held = _SCRATCH.buffers = (*(np.empty(nbytes, np.uint8) for _ in range(3)), room)
    raw, split, t, out = held
    return raw[:nbytes], split[:nbytes], t[:nbytes], out


_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_THREADS = cores()
_LOCK = threading.Lock()


def set_threads(n: int) -> None:
    """Threads the chunk pool runs (`--threads`, as OpenEXR's own pool: io.exr.set_threads sets both)."""
    global _THREADS
    _THREADS = max(1, int(n))


def _pool() -> ThreadPoolExecutor:
    global _POOL, _POOL_SIZE
    with _LOCK:
        if _POOL is None or _POOL_SIZE != _THREADS:
            old, _POOL, _POOL_SIZE = _POOL, ThreadPoolExecutor(_THREADS, thread_name_prefix="oxi-exr"), _THREADS
            if old is not None:
                old.shutdown(wait=False)  # chunks already queued there still run
        return _POOL


def _finish(chunks: Sequence[Future]) -> None:
    """Wait for every chunk, then raise the first failure: none may still be running when its caller moves on."""
    wait(chunks)
    for chunk in chunks:
        chunk.result()


def _drop(chunks: Sequence[Future]) -> None:
    """Cancel the chunks not yet started and wait for the rest."""
    for chunk in chunks:
        chunk.cancel()
    wait(chunks)


def _lines_of(raw: np.ndarray, layout: ChunkLayout, lines: int) -> list[np.ndarray]:
    """One (lines, width) array per channel, viewing a chunk's raw bytes."""
    rows = raw.reshape(lines, layout.row_bytes)
    out, col = [], 0
    for _, kind in layout.channels:
        span = layout.width * _BYTES[kind]
        out.append(rows[:, col : col + span])
        col += span
    return out


class ExrChunkReader:
    """Rows [start, stop) of a one-part scanline NONE/ZIPS/ZIP file, decoded chunk by chunk in parallel.
    `spec` (the file's, when the caller has it) rides along for the band pipeline."""

    fresh = True

    def __init__(self, path: Path, layout: ChunkLayout, header_bytes: int, spec: Any = None) -> None:
        self.path = Path(path)
        self.layout = layout
        self.spec = spec
        self.width, self.height = layout.width, layout.height
        self.row_step = layout.lines  # bands of a multiple of this many rows decode each chunk once
        self._fd = os.open(self.path, os.O_RDONLY)
        table = os.pread(self._fd, 8 * layout.count, header_bytes)
        if len(table) != 8 * layout.count:
            self.close()
            raise self._corrupt("its chunk offset table is cut short")
        self._offsets = np.frombuffer(table, "<u8").astype(np.int64)
        self._size = os.fstat(self._fd).st_size
        self._last_stop: int | None = None
        # The band queued ahead: its rows, its planes and its chunks.
        self._ahead: tuple[tuple[int, int], tuple[dict[str, np.ndarray], list[Future]]] | None = None
        if (self._offsets < header_bytes).any() or (self._offsets >= self._size).any():
            self.close()
            raise self._corrupt("a chunk offset points outside the file")

    def _corrupt(self, why: str) -> InputError:
        return InputError(f"{self.path}: the EXR file is truncated or corrupt ({why}); re-export or re-copy it")

    def read_rows(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Rows [start, stop). The band one step further (the step between the last two calls' ends: a band
        clipped at the top edge has a shorter start step) is queued on the pool behind this one, so the pool
        starts on it while the caller works: band by band it idled at each band's end (an 8K band is 21
        chunks for 16 threads)."""
        lay = self.layout
        if not 0 <= start < stop <= lay.height:
            raise ProcessingError(f"rows {start}..{stop} lie outside {self.path}'s {lay.height} rows")
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == (start, stop):
            planes, chunks = ahead[1]
        else:
            if ahead is not None:
                _drop(ahead[1][1])
            planes, chunks = self._queue(start, stop)
        # No guess from a first band: a halo band's start step differs from its length, and a wrong guess is
        # a band decoded for nothing.
        step = stop - self._last_stop if self._last_stop is not None else 0
        self._last_stop = stop
        if step > 0 and start + step < lay.height:
            rows = (start + step, min(stop + step, lay.height))
            self._ahead = (rows, self._queue(*rows))
        _finish(chunks)
        return planes

    def _queue(self, start: int, stop: int) -> tuple[dict[str, np.ndarray], list[Future]]:
        """Planes for rows [start, stop), and their chunks queued on the pool to decode into them."""
        lay = self.layout
        planes = [np.empty((stop - start, lay.width), _DTYPES[kind]) for _, kind in lay.channels]
        views = [p.view(np.uint8) for p in planes]
        first, last = start // lay.lines, (stop - 1) // lay.lines

        def one(k: int) -> None:
            c0, c1 = lay.rows_of(k)
            lo, hi = max(c0, start), min(c1, stop)
            data, split = self._chunk(k, c1 - c0)
            if not split:
                for view, rows in zip(views, _lines_of(data, lay, c1 - c0), strict=True):
                    view[lo - start : hi - start] = rows[lo - c0 : hi - c0]
                return
            for view, (even, odd) in zip(views, _halves(data, lay, c1 - c0), strict=True):
                pairs = view[lo - start : hi - start].reshape(hi - lo, even.shape[1], 2)
                pairs[:, :, 0] = even[lo - c0 : hi - c0]
                pairs[:, :, 1] = odd[lo - c0 : hi - c0]

        pool = _pool()
        chunks = [pool.submit(one, k) for k in range(first, last + 1)]
        return {name: plane for (name, _), plane in zip(lay.channels, planes, strict=True)}, chunks

    def _chunk(self, k: int, lines: int) -> tuple[np.ndarray, bool]:
        """Chunk k's scanlines (lines * row_bytes), and whether they are still split into even and odd bytes
        (inflated into this pool thread's scratch buffer: the caller places them before its next chunk)."""
        expected = lines * self.layout.row_bytes
        head = os.pread(self._fd, 8, int(self._offsets[k]))
        if len(head) != 8:
            raise self._corrupt(f"chunk {k} is cut short")
        y, size = struct.unpack("<ii", head)
        if y != self.layout.y0 + k * self.layout.lines or not 0 < size <= expected:
            raise self._corrupt(f"chunk {k} has a bad header (y {y}, {size} bytes)")
        data = os.pread(self._fd, size, int(self._offsets[k]) + 8)
        if len(data) != size:
            raise self._corrupt(f"chunk {k} is cut short")
        if size == expected:  # stored as is: compressing it would not have made it smaller
            return np.frombuffer(data, np.uint8), False
        return self._inflate(data, expected, k), True

    def _inflate(self, data: bytes, expected: int, k: int) -> np.ndarray:
        import imagecodecs

        t = _scratch(expected)[2]
        try:
            got = imagecodecs.deflate_decode(data, out=t)
        except Exception as e:
            raise self._corrupt(f"chunk {k} does not inflate: {e}") from None
        if len(got) != expected:
            raise self._corrupt(f"chunk {k} inflates to {len(got)} bytes, not {expected}")
        _undelta(t)
        return t

    def close(self) -> None:
        if self._ahead is not None:  # its chunks must not outlive the file descriptor
            _drop(self._ahead[1][1])
            self._ahead = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ExrChunkReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ExrChunkWriter:
    """Writes a one-part scanline NONE/ZIPS/ZIP file top to bottom in bands: `prefix` (magic, version and
    header, as OpenEXR writes them), the chunk offset table, then the chunks, compressed in parallel."""

    def __init__(self, path: Path, prefix: bytes, layout: ChunkLayout, *, name: str | Path | None = None) -> None:
        self.path = Path(path)
        self.name = str(name or path)
        self.layout = layout
        self.rows_written = 0
        self._pending: list[np.ndarray] | None = None  # rows short of a whole chunk, per channel
        self._offsets = np.zeros(layout.count, np.uint64)
        self._next_chunk = 0
        self._encoding: deque[tuple[int, list[Future]]] = deque()  # bands queued on the pool, oldest first
        self._file = open(self.path, "wb")  # noqa: SIM115 - closed by close() or abort()
        self._file.write(prefix)
        self._table_at = self._file.tell()
        self._file.write(bytes(8 * layout.count))

    def write_rows(self, planes: dict[str, np.ndarray]) -> None:
        """The next rows of every channel, each (rows, width) in its pixel type."""
        lay = self.layout
        band = [np.ascontiguousarray(planes[name], dtype=_DTYPES[kind]) for name, kind in lay.channels]
        rows = band[0].shape[0]
        if any(p.shape != (rows, lay.width) for p in band):
            raise ProcessingError(f"{self.name}: band channels must all be ({rows}, {lay.width})")
        if self.rows_written + rows > lay.height:
            raise ProcessingError(f"{self.name}: {self.rows_written + rows} rows written into {lay.height}")
        if self._pending is not None:
            band = [np.concatenate([old, new]) for old, new in zip(self._pending, band, strict=True)]
            self._pending = None
        self.rows_written += rows
        have = band[0].shape[0]
        whole = have if self.rows_written == lay.height else have // lay.lines * lay.lines
        if whole < have:
            self._pending = [p[whole:] for p in band]
        if whole:
            self._encode([p[:whole] for p in band], self._next_chunk * lay.lines)

    def _encode(self, band: list[np.ndarray], start: int) -> None:
        """Queue the band's chunks on the pool and write out the band before it: the pool starts on this band
        while the last one's chunks finish, where waiting for each band left cores idle at its end (an 8K band
        is 21 chunks for 16 threads). The band's arrays must not change until it is written."""
        lay = self.layout
        first = start // lay.lines
        count = -(-band[0].shape[0] // lay.lines)

        def one(i: int) -> bytes:
            r0 = i * lay.lines
            r1 = min(band[0].shape[0], r0 + lay.lines)
            _, _, _, out = buffers = _scratch((r1 - r0) * lay.row_bytes)
            size = self._deflate([plane[r0:r1] for plane in band], *buffers)
            struct.pack_into("<ii", out, 0, lay.y0 + start + r0, size)
            return bytes(memoryview(out)[: 8 + size])

        pool = _pool()
        self._encoding.append((first, [pool.submit(one, i) for i in range(count)]))
        self._next_chunk = first + count
        while len(self._encoding) > _BANDS_ENCODING:
            self._write_oldest()

    def _write_oldest(self) -> None:
        first, chunks = self._encoding.popleft()
        for i, chunk in enumerate(chunks):
            self._offsets[first + i] = self._file.tell()
            self._file.write(chunk.result())

    def _deflate(
        self, rows: list[np.ndarray], raw: np.ndarray, split: np.ndarray, t: np.ndarray, out: bytearray
    ) -> int:
        """A chunk's rows of every channel into out[8:] (compressed, unless that is no smaller); returns the
        data's size."""
        if self.layout.compression != "none":
            import imagecodecs

            _split_into(rows, self.layout, split)
            imagecodecs.delta_encode(split, out=t)
            t[1:] += np.uint8(128)
            size = len(imagecodecs.deflate_encode(t, level=_ZLIB_LEVEL, out=memoryview(out)[8:]))
            if size < raw.size:
                return size
        for dest, plane in zip(_lines_of(raw, self.layout, rows[0].shape[0]), rows, strict=True):
            dest[:] = plane.view(np.uint8)
        out[8 : 8 + raw.size] = raw.data
        return raw.size

    def close(self) -> None:
        """Write the offset table; every row must have been written."""
        try:
            while self._encoding:
                self._write_oldest()
            if self.rows_written != self.layout.height or self._next_chunk != self.layout.count:
                written, height = self.rows_written, self.layout.height
                raise ProcessingError(f"{self.name}: only {written} of {height} rows were written")
            self._file.seek(self._table_at)
            self._file.write(self._offsets.astype("<u8").tobytes())
            self._file.flush()
        finally:
            self._file.close()

    def abort(self) -> None:
        _drop([chunk for _, chunks in self._encoding for chunk in chunks])
        self._encoding.clear()
        self._file.close()
