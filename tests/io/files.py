"""Test files written and read straight through the libraries (OpenEXR, pypng, tifffile), not through oxi."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import OpenEXR

from tests.reference import hdr_image

EXR_DTYPES = {"half": np.float16, "float": np.float32, "uint32": np.uint32}


def plane(shape: tuple[int, int], kind: str, seed: int) -> np.ndarray:
    """Random data of one pixel type: HDR floats with negatives, NaN and ±Inf; integers over the full range."""
    if kind in ("half", "float"):
        return hdr_image(shape, seed, nonfinite=True).astype(EXR_DTYPES[kind])
    top = {"uint8": 255, "uint16": 65535, "uint32": 2**32 - 1}[kind]
    dtype = {"uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32}[kind]
    return np.random.default_rng(seed).integers(1, top, size=shape, endpoint=True, dtype=dtype)


def planes(names: str | list[str], shape: tuple[int, int], kind: str, seed: int = 0) -> dict[str, np.ndarray]:
    names = list(names) if isinstance(names, str) else names
    return {name: plane(shape, kind, seed + i) for i, name in enumerate(names)}


def write_exr(path: Path, channels: dict[str, np.ndarray], **header: Any) -> Path:
    header.setdefault("compression", OpenEXR.ZIP_COMPRESSION)
    header.setdefault("type", OpenEXR.scanlineimage)
    OpenEXR.File(header, dict(channels)).write(str(path))  # File() swaps the dict's arrays for Channels
    return path


def read_exr(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    with OpenEXR.File(str(path), separate_channels=True) as f:
        header = dict(f.header())
        channels = {name: ch.pixels.copy() for name, ch in f.channels().items()}
    return header, channels


def read_exr_parts(path: Path) -> list[tuple[str, dict[str, Any], dict[str, np.ndarray]]]:
    with OpenEXR.File(str(path), separate_channels=True) as f:
        return [
            (p.name(), dict(p.header), {name: ch.pixels.copy() for name, ch in p.channels.items()}) for p in f.parts
        ]


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bit patterns, so NaN payloads and ±0 compare exactly."""
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def assert_same_planes(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert sorted(got) == sorted(want)
    for name, expected in want.items():
        assert got[name].dtype == expected.dtype, name
        np.testing.assert_array_equal(bits(got[name]), bits(expected), err_msg=name)


def box(x0: int, y0: int, x1: int, y1: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([x0, y0], dtype=np.int32), np.array([x1, y1], dtype=np.int32))


def window(w: Any) -> tuple[int, int, int, int]:
    return (int(w[0][0]), int(w[0][1]), int(w[1][0]), int(w[1][1]))


def flat_png(path: Path, width: int, height: int, palette: bool = False) -> Path:
    """A black 8-bit RGB PNG of any size, written without holding its pixels: one deflate segment of 1000 zero
    rows, fully flushed (so it stands alone), repeated; 30000x30000 (2.5 GiB decoded) is a 2.6 MB file. With
    `palette`, the same picture as palette indices (one black entry), a PNG that is decoded whole."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = 1 + (1 if palette else 3) * width  # filter byte 0, then the zero samples
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = deflate.compress(bytes(row * 1000)) + deflate.flush(zlib.Z_FULL_FLUSH)
    tail = deflate.compress(bytes(row * (height % 1000))) + deflate.flush(zlib.Z_FINISH)
    adler = ((row * height) % 65521) << 16 | 1  # Adler-32 of zeros: A stays 1, B counts the bytes
    stream = b"\x78\xda" + block * (height // 1000) + tail + struct.pack(">I", adler)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 3 if palette else 2, 0, 0, 0)
    plte = chunk(b"PLTE", bytes(3)) if palette else b""
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + plte + chunk(b"IDAT", stream)
                     + chunk(b"IEND", b""))
    return path
