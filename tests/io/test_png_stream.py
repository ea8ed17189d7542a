"""PNG by bands of rows (io/png_stream.py): every band as the whole decode gives it, PNGs that must go whole say why,
a streamed PNG output holds the single pass's pixels, and a big PNG's statistics take a band's memory, not the
image's (issue 34: a 30000x30000 PNG made `oxi info --stats` die with MemoryError)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import imagecodecs
import numpy as np
import pytest

from oxi_cli.io.png_stream import PngRegionReader, region_blocker
from oxi_cli.io.raster import read_png
from tests.io.files import flat_png

KINDS = [((200, 301, 3), np.uint8), ((200, 301, 4), np.uint16), ((120, 77), np.uint8), ((90, 64, 2), np.uint16),
         ((64, 40, 4), np.uint8)]


def _png(path: Path, shape: tuple[int, ...], dtype: type, seed: int = 1) -> Path:
    """Noise with flat stretches, encoded by libpng with its adaptive filters (every filter type shows up)."""
    rng = np.random.default_rng(seed)
    pixels = (rng.random(shape) * np.iinfo(dtype).max).astype(dtype)
    pixels[shape[0] // 4 : shape[0] // 3] = pixels[shape[0] // 4 - 1]
    path.write_bytes(imagecodecs.png_encode(pixels))
    return path


@pytest.mark.parametrize(("shape", "dtype"), KINDS, ids=[f"{s}-{d.__name__}" for s, d in KINDS])
def test_every_band_is_what_the_whole_decode_gives(tmp_path: Path, shape: tuple[int, ...], dtype: type):
    path = _png(tmp_path / "p.png", shape, dtype)
    whole = read_png(path)
    height = shape[0]
    assert region_blocker(path) is None
    # In order, overlapping (a filter's halo), and starting again above the last band (the file decodes afresh).
    for bands in ([(0, height)], [(0, 7), (7, 50), (45, 60), (58, height)], [(10, 20), (0, 5), (5, height)]):
        with PngRegionReader(path) as reader:
            for start, stop in bands:
                got = reader.read_rows(start, stop)
                assert list(got) == list(whole.planes)
                for name, plane in whole.planes.items():
                    assert got[name].dtype == plane.dtype and np.array_equal(got[name], plane[start:stop]), name


def _raw_png(path: Path, width: int, height: int, depth: int, colour: int, interlace: int, data: bytes) -> Path:
    """A PNG from its IHDR fields and its filtered image data, as the specification lays it out."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(data))
                     + chunk(b"IEND", b""))
    return path


def test_pngs_that_go_whole_say_why_and_still_read(tmp_path: Path):
    cases = {
        "a palette PNG is read whole": flat_png(tmp_path / "palette.png", 8, 8, palette=True),
        # 1x1 and Adam7: the one pixel is the first pass's, the other six passes are empty.
        "an interlaced (Adam7) PNG is read whole": _raw_png(tmp_path / "adam7.png", 1, 1, 8, 2, 1, bytes(4)),
        "a 1-bit PNG is read whole": _raw_png(tmp_path / "bits.png", 8, 8, 1, 0, 0, bytes(16)),
    }
    for reason, path in cases.items():
        assert region_blocker(path) == reason
        stats = _oxi("info", str(path), "--stats", "--json")
        assert stats.returncode == 0, stats.stderr


def _oxi(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OXI_BACKEND": "cpu", "OXI_SERVER": "off"}
    env.pop("OXI_OVERWRITE", None)
    cmd = [str(Path(sys.executable).parent / "oxi"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.parametrize(("shape", "dtype"), [((300, 257, 3), np.uint8), ((260, 300, 4), np.uint16)])
def test_a_streamed_png_holds_the_single_pass_pixels(tmp_path: Path, shape: tuple[int, ...], dtype: type):
    src = _png(tmp_path / "in.png", shape, dtype, seed=3)
    banded, whole = tmp_path / "banded.png", tmp_path / "whole.png"
    plan = _oxi("cdl", str(src), str(banded), "--slope", "0.8", "--power", "1.2", "--strategy", "streaming", "--plan")
    assert plan.returncode == 0 and "streaming" in plan.stdout, plan.stdout + plan.stderr
    for out, strategy in ((banded, "streaming"), (whole, "single")):
        done = _oxi("cdl", str(src), str(out), "--slope", "0.8", "--power", "1.2", "--strategy", strategy)
        assert done.returncode == 0, done.stderr
    a, b = read_png(banded), read_png(whole)
    assert a.meta.pixel_types == b.meta.pixel_types
    for name in b.planes:
        assert np.array_equal(a.planes[name], b.planes[name]), name


def _peak_rss(*args: str) -> int:
    """The peak resident memory of one `oxi` process, in bytes (the kernel's count, os.wait4)."""
    env = {**os.environ, "OXI_BACKEND": "cpu", "OXI_SERVER": "off"}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "oxi"), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, proc.stderr.read() if proc.stderr else ""
    return usage.ru_maxrss * 1024


def test_stats_of_a_big_png_take_a_band_of_memory_not_the_image(tmp_path: Path):
    small = flat_png(tmp_path / "small.png", 100, 100)
    big = flat_png(tmp_path / "big.png", 12000, 12000)  # 412 MiB decoded, 1.6 GiB as float32
    extra = _peak_rss("info", str(big), "--stats") - _peak_rss("info", str(small), "--stats")
    assert extra < 200 << 20, f"{extra / 2**20:.0f} MiB more than for a 100x100 PNG"
