"""Corrupt EXR, PNG, TIFF, LUT and CDL files made from valid ones: truncations, bit flips and lying header sizes."""

from __future__ import annotations

import random
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import OpenEXR
import tifffile

SEED = 20240613


@dataclass(frozen=True)
class Case:
    """One corrupt file: a name saying how it was made, its extension and its bytes."""

    name: str
    ext: str
    data: bytes

    def write(self, folder: Path) -> Path:
        path = folder / f"{self.name}{self.ext}"
        path.write_bytes(self.data)
        return path


# --- valid files ------------------------------------------------------------------------------------


def _exr_bytes(folder: Path, name: str, channels: dict[str, np.ndarray], **header: object) -> bytes:
    path = folder / f"{name}.exr"
    OpenEXR.File({"type": OpenEXR.scanlineimage, **header}, dict(channels)).write(str(path))
    return path.read_bytes()


def _smooth(height: int, width: int, dtype: type) -> dict[str, np.ndarray]:
    """Gradients: they compress, so a flipped bit lands in codec data rather than in raw pixels."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    return {c: ((x * (i + 1) + y) / (width + height)).astype(dtype) for i, c in enumerate("RGBA")}


def valid_exrs(folder: Path) -> dict[str, bytes]:
    tiles = OpenEXR.TileDescription()
    tiles.xSize = tiles.ySize = 16
    return {
        "zip": _exr_bytes(folder, "zip", _smooth(40, 56, np.float16), compression=OpenEXR.ZIP_COMPRESSION),
        "none": _exr_bytes(folder, "none", _smooth(9, 13, np.float32), compression=OpenEXR.NO_COMPRESSION),
        "piz": _exr_bytes(folder, "piz", _smooth(33, 20, np.float16), compression=OpenEXR.PIZ_COMPRESSION),
        "tiled": _exr_bytes(
            folder, "tiled", _smooth(40, 40, np.float16), compression=OpenEXR.ZIP_COMPRESSION,
            type=OpenEXR.tiledimage, tiles=tiles,
        ),
    }


def valid_pngs() -> dict[str, bytes]:
    import imagecodecs

    rgb = (np.stack(list(_smooth(24, 32, np.float32).values())[:3], axis=-1) * 255).astype(np.uint8)
    rgba16 = (np.stack(list(_smooth(12, 20, np.float32).values()), axis=-1) * 65535).astype(np.uint16)
    return {"rgb8": imagecodecs.png_encode(rgb), "rgba16": imagecodecs.png_encode(rgba16)}


def valid_tiffs(folder: Path) -> dict[str, bytes]:
    rgb = (np.stack(list(_smooth(24, 32, np.float32).values())[:3], axis=-1) * 255).astype(np.uint8)
    floats = np.stack(list(_smooth(10, 14, np.float32).values())[:3], axis=-1)
    out = {}
    for name, pixels, codec in (("deflate", rgb, "adobe_deflate"), ("none", floats, None), ("lzw", rgb, "lzw")):
        path = folder / f"{name}.tif"
        tifffile.imwrite(path, pixels, photometric="rgb", compression=codec, rowsperstrip=8)
        out[name] = path.read_bytes()
    return out


def _rows(n: int, cols: int, fmt: str = "{:.6f}") -> str:
    values = np.random.default_rng(n).uniform(0, 1, (n, cols))
    return "".join(" ".join(fmt.format(v) for v in row) + "\n" for row in values)


def valid_luts() -> dict[str, bytes]:
    grid = [(r, g, b) for r in range(3) for g in range(3) for b in range(3)]
    spi3d = "SPILUT 1.0\n3 3\n3 3 3\n" + "".join(f"{r} {g} {b} {r / 2} {g / 2} {b / 2}\n" for r, g, b in grid)
    threedl = "0 512 1023\n" + "".join(f"{r * 511} {g * 511} {b * 511}\n" for r, g, b in grid)
    return {
        "cube": ('TITLE "fuzz"\nLUT_1D_SIZE 4\nLUT_3D_SIZE 3\n' + _rows(4, 3) + _rows(27, 3)).encode(),
        "3dl": threedl.encode(),
        "spi1d": ("Version 1\nFrom 0 1\nLength 6\nComponents 1\n{\n" + _rows(6, 1) + "}\n").encode(),
        "spi3d": spi3d.encode(),
    }


def valid_cdls() -> dict[str, bytes]:
    cc = (
        '<ColorCorrection id="sh010">\n<SOPNode>\n<Slope>1.1 1.0 0.9</Slope>\n<Offset>0.01 0 -0.01</Offset>\n'
        "<Power>1.2 1 0.9</Power>\n</SOPNode>\n<SatNode><Saturation>0.9</Saturation></SatNode>\n</ColorCorrection>\n"
    )
    head = '<?xml version="1.0" encoding="UTF-8"?>\n'
    return {
        "cc": (head + cc).encode(),
        "ccc": (head + '<ColorCorrectionCollection xmlns="urn:ASC:CDL:v1.01">\n' + cc
                + cc.replace("sh010", "sh020") + "</ColorCorrectionCollection>\n").encode(),
        "cdl": (head + "<ColorDecisionList>\n<ColorDecision>\n" + cc
                + "</ColorDecision>\n</ColorDecisionList>\n").encode(),
    }


# --- mutations ------------------------------------------------------------------------------------


def truncations(name: str, ext: str, data: bytes, rng: random.Random, count: int) -> list[Case]:
    """Cuts at fixed places (inside the signature, the header, the end) and at seeded random ones."""
    fixed = {1, 4, 7, 12, 30, len(data) // 2, len(data) - 1, len(data) - 9}
    spots = sorted({n for n in fixed if 0 < n < len(data)} | {rng.randrange(1, len(data)) for _ in range(count)})
    return [Case(f"{name}-cut{n}", ext, data[:n]) for n in spots]


def bit_flips(name: str, ext: str, data: bytes, rng: random.Random, count: int) -> list[Case]:
    """One flipped bit per case at a seeded position; a few cases flip three."""
    cases = []
    for i in range(count):
        flips = [(rng.randrange(len(data)), rng.randrange(8)) for _ in range(3 if i % 5 == 4 else 1)]
        mutated = bytearray(data)
        for pos, bit in flips:
            mutated[pos] ^= 1 << bit
        cases.append(Case(f"{name}-flip{i}-" + "-".join(f"{p}.{b}" for p, b in flips), ext, bytes(mutated)))
    return cases


def _exr_attrs(data: bytes) -> dict[str, tuple[int, int]]:
    """Attribute name -> (offset of its size field, size), first part."""
    found, pos = {}, 8
    while data[pos] != 0:
        end = data.index(b"\0", pos)
        tend = data.index(b"\0", end + 1)
        found[data[pos:end].decode()] = (tend + 1, struct.unpack_from("<i", data, tend + 1)[0])
        pos = tend + 5 + found[data[pos:end].decode()][1]
    return found


def _patched(data: bytes, at: int, fmt: str, *values: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, *values)
    return bytes(out)


def exr_lies(name: str, data: bytes) -> list[Case]:
    """Headers whose sizes, windows, codes and offsets say what the file cannot back."""
    attrs = _exr_attrs(data)
    window = attrs["dataWindow"][0] + 4
    x0, y0, x1, y1 = struct.unpack_from("<iiii", data, window)
    header_end = max(at + 4 + size for at, size in attrs.values()) + 1
    lies = {
        "wide": _patched(data, window, "<iiii", x0, y0, x0 + 100_000_000 - 1, y1),
        "tall": _patched(data, window, "<iiii", x0, y0, x1, y0 + 2_000_000_000),
        "big": _patched(data, window, "<iiii", x0, y0, x0 + 200_000 - 1, y0 + 200_000 - 1),
        "wider": _patched(data, window, "<iiii", x0, y0, x0 + 65_535, y1),
        "empty": _patched(data, window, "<iiii", x1, y1, x0, y0),
        "negattr": _patched(data, attrs["channels"][0], "<i", -(len("channels\0chlist\0") + 4)),
        "hugeattr": _patched(data, attrs["compression"][0], "<i", 0x7FFFFFF0),
        "codec": _patched(data, attrs["compression"][0] + 4, "<B", 42),
        "lineorder": _patched(data, attrs["lineOrder"][0] + 4, "<B", 2),
        "lineorder9": _patched(data, attrs["lineOrder"][0] + 4, "<B", 9),
        "offset": _patched(data, header_end, "<Q", 1 << 40),
        "offset0": _patched(data, header_end, "<Q", 0),
        "version": _patched(data, 4, "<I", 0x7F02),
    }
    return [Case(f"{name}-lie-{lie}", ".exr", mutated) for lie, mutated in lies.items()]


def _png_with_ihdr(data: bytes, width: int, height: int, depth: int, color: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    return data[:16] + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)) + data[33:]


def png_lies(name: str, data: bytes) -> list[Case]:
    width, height, depth, color = struct.unpack(">IIBB", data[16:26])
    idat = data.index(b"IDAT") - 4
    lies = {
        "30000sq": _png_with_ihdr(data, 30000, 30000, depth, color),
        "wide2_31": _png_with_ihdr(data, 2**31, 1, depth, color),
        "width0": _png_with_ihdr(data, 0, height, depth, color),
        "depth5": _png_with_ihdr(data, width, height, 5, color),
        "color7": _png_with_ihdr(data, width, height, depth, 7),
        "tall": _png_with_ihdr(data, width, height * 1000, depth, color),
        "idatlen": _patched(data, idat, ">I", 0x7FFFFFFF),
        "ihdrlen": _patched(data, 8, ">I", 0xFFFFFFF0),
    }
    return [Case(f"{name}-lie-{lie}", ".png", mutated) for lie, mutated in lies.items()]


def tiff_lies(name: str, data: bytes, folder: Path) -> list[Case]:
    path = folder / f"{name}-src.tif"
    path.write_bytes(data)
    with tifffile.TiffFile(path) as tif:
        tags = {t.name: (t.valueoffset, t.dtype, t.count) for t in tif.pages.first.tags.values()}
    short = {3: "<H", 4: "<I"}

    def tag(tag_name: str, value: int) -> bytes:
        at, dtype, _ = tags[tag_name]
        return _patched(data, at, short.get(int(dtype), "<H"), value)

    lies = {
        "comp9999": tag("Compression", 9999),
        "spp0": tag("SamplesPerPixel", 0),
        "spp100": tag("SamplesPerPixel", 100),
        "width0": tag("ImageWidth", 0),
        "width_huge": tag("ImageWidth", 60000),
        "length_huge": tag("ImageLength", 60000),
        "bits64": _patched(data, tags["BitsPerSample"][0], "<H", 64),
        "rows0": tag("RowsPerStrip", 0),
        "ifd_past": _patched(data, 4, "<I", len(data) + 1000),
        "ifd_odd": _patched(data, 4, "<I", 3),
    }
    return [Case(f"{name}-lie-{lie}", ".tif", mutated) for lie, mutated in lies.items()]


def lut_lies(name: str, ext: str) -> list[Case]:
    lies = {
        ".cube": {"size256": b"LUT_3D_SIZE 256\n0 0 0\n", "size1d": b"LUT_1D_SIZE 1048576\n0 0 0\n",
                  "huge": b"LUT_3D_SIZE 2\n" + b"1e39 0 0\n" * 8, "binary": b"LUT_3D_SIZE 2\n\x00\x01\x02" * 50},
        ".3dl": {"rows": b"0 512 1023\n" + b"1 2\n" * 27, "float": b"0 1 2\n" + b"0.5 0.5 0.5\n" * 8},
        ".spi1d": {"length": b"Version 1\nLength 1000000000\nComponents 1\n{\n0\n}\n",
                   "open": b"Version 1\nLength 2\nComponents 1\n{\n0\n1\n"},
        ".spi3d": {"size": b"SPILUT 1.0\n3 3\n256 256 256\n0 0 0 0 0 0\n",
                   "index": b"SPILUT 1.0\n3 3\n2 2 2\n" + b"9 9 9 0 0 0\n" * 8},
    }[ext]
    return [Case(f"{name}-lie-{lie}", ext, data) for lie, data in lies.items()]


def cdl_lies(name: str, ext: str, data: bytes) -> list[Case]:
    text = data.decode()
    lies = {
        "slope": text.replace("1.1 1.0 0.9", "1e39 1 1"),
        "nan": text.replace("1.1 1.0 0.9", "nan 1 1"),
        "count": text.replace("1.1 1.0 0.9", "1.1 1.0"),
        "entity": text.replace("?>\n", '?>\n<!DOCTYPE x [<!ENTITY a "aaaa">]>\n', 1),
        "deep": text.replace("<SOPNode>", "<a>" * 5000 + "<SOPNode>", 1).replace(
            "</SOPNode>", "</SOPNode>" + "</a>" * 5000, 1
        ),
        "power": text.replace("1.2 1 0.9", "-1 1 1"),
    }
    return [Case(f"{name}-lie-{lie}", ext, mutated.encode()) for lie, mutated in lies.items()]


def image_corpus(folder: Path, flips: int, cuts: int) -> list[Case]:
    """Every corrupt image case: each valid file truncated, bit-flipped and lied about."""
    rng = random.Random(SEED)
    cases: list[Case] = []
    families = [
        ("exr", ".exr", valid_exrs(folder), exr_lies),
        ("png", ".png", valid_pngs(), png_lies),
        ("tif", ".tif", valid_tiffs(folder), lambda name, data: tiff_lies(name, data, folder)),
    ]
    for family, ext, valid, lies in families:
        for name, data in valid.items():
            label = f"{family}-{name}"
            cases += truncations(label, ext, data, rng, cuts) + bit_flips(label, ext, data, rng, flips)
            cases += lies(label, data)
    return cases


def side_file_corpus(flips: int, cuts: int) -> list[Case]:
    """Every corrupt LUT and CDL case."""
    rng = random.Random(SEED + 1)
    cases: list[Case] = []
    for kind, data in valid_luts().items():
        ext = f".{kind}"
        cases += truncations(f"lut-{kind}", ext, data, rng, cuts) + bit_flips(f"lut-{kind}", ext, data, rng, flips)
        cases += lut_lies(f"lut-{kind}", ext)
    for kind, data in valid_cdls().items():
        ext = f".{kind}"
        cases += truncations(f"cdl-{kind}", ext, data, rng, cuts) + bit_flips(f"cdl-{kind}", ext, data, rng, flips)
        cases += cdl_lies(f"cdl-{kind}", ext, data)
    return cases
