"""PNG and TIFF headers are claims, and image paths must be regular files: bad ones are one InputError line, fast."""

from __future__ import annotations

import os
import re
import struct
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
import tifffile

from oxi_cli.errors import InputError
from oxi_cli.io import read_image, read_spec

READERS = [read_image, read_spec]
PYTHON_WORDS = re.compile(r"unpack requires|object has no attribute|IndexError|KeyError|zip\(\)|index out of range")


def refused(read, path: Path, *words: str) -> str:
    t0 = time.monotonic()
    with pytest.raises(InputError) as caught:
        read(path)
    assert time.monotonic() - t0 < 1.0
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)), message
    assert not PYTHON_WORDS.search(message), message
    for word in words:
        assert word in message, message
    return message


@pytest.fixture
def png(tmp_path: Path) -> Path:
    import imagecodecs

    pixels = np.random.default_rng(0).integers(0, 255, (16, 24, 3), dtype=np.uint8)
    path = tmp_path / "good.png"
    path.write_bytes(imagecodecs.png_encode(pixels))
    return path


def with_ihdr(src: Path, dst: Path, width: int, height: int, depth: int = 8, color: int = 2) -> Path:
    """`src` with IHDR rewritten (and its CRC fixed, so only the values are wrong)."""
    data = bytearray(src.read_bytes())
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    data[16:29] = ihdr
    data[29:33] = struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    dst.write_bytes(bytes(data))
    return dst


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize(
    ("width", "height", "depth", "words"),
    [
        (30000, 30000, 8, "claims 30000x30000 pixels"),
        (2**31, 1, 8, "sides must be 1..1000000"),
        (0, 16, 8, "sides must be 1..1000000"),
        (24, 16, 5, "bit depth 5 with colour type 2 is invalid"),
    ],
)
def test_png_header_values_are_checked_before_decoding(tmp_path, png, read, width, height, depth, words, capfd):
    refused(read, with_ihdr(png, tmp_path / "bad.png", width, height, depth), words)
    assert capfd.readouterr().err == ""  # no "PNG warning:" from libpng


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("keep", [8, 20, 30])
def test_a_png_cut_inside_ihdr_is_corrupt(tmp_path: Path, png: Path, read, keep: int):
    (tmp_path / "cut.png").write_bytes(png.read_bytes()[:keep])
    refused(read, tmp_path / "cut.png", "IHDR")


def test_a_png_cut_in_its_pixel_data_is_corrupt(tmp_path: Path, png: Path):
    data = png.read_bytes()
    (tmp_path / "cut.png").write_bytes(data[: len(data) // 2])
    refused(read_image, tmp_path / "cut.png", "not a valid PNG file or it is truncated")


@pytest.fixture
def tiff(tmp_path: Path) -> Path:
    path = tmp_path / "good.tif"
    tifffile.imwrite(path, np.random.default_rng(1).integers(0, 255, (16, 24, 3), dtype=np.uint8), photometric="rgb")
    return path


def with_tag(src: Path, dst: Path, name: str, value: int) -> Path:
    with tifffile.TiffFile(src) as tif:
        at = tif.pages.first.tags[name].valueoffset
    data = bytearray(src.read_bytes())
    struct.pack_into("<H", data, at, value)
    dst.write_bytes(bytes(data))
    return dst


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize(
    ("tag", "value", "words"),
    [
        ("Compression", 9999, "TIFF compression 9999 is not supported"),
        ("SamplesPerPixel", 0, "not a valid TIFF file"),
        ("ImageWidth", 0, "not a valid TIFF file"),
        ("SamplesPerPixel", 2, "not a valid TIFF file"),
    ],
)
def test_tiff_header_values_are_checked_before_decoding(tmp_path, tiff, read, tag, value, words):
    refused(read, with_tag(tiff, tmp_path / "bad.tif", tag, value), words)


@pytest.mark.parametrize("read", READERS)
def test_a_tiff_whose_first_directory_is_past_the_end_is_corrupt(tmp_path: Path, tiff: Path, read):
    data = bytearray(tiff.read_bytes())
    struct.pack_into("<I", data, 4, len(data) + 1000)
    (tmp_path / "bad.tif").write_bytes(bytes(data))
    refused(read, tmp_path / "bad.tif", "first directory lies outside the file")


@pytest.mark.parametrize("read", READERS)
def test_a_tiff_whose_strips_run_past_the_end_is_truncated(tmp_path: Path, tiff: Path, read):
    data = tiff.read_bytes()
    (tmp_path / "cut.tif").write_bytes(data[: len(data) // 2])
    refused(read, tmp_path / "cut.tif", "runs past the end of the file")


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("ext", [".exr", ".png", ".tif", ".jpg"])
def test_a_fifo_image_is_refused_without_blocking(tmp_path: Path, read, ext: str):
    os.mkfifo(tmp_path / f"pipe{ext}")
    refused(read, tmp_path / f"pipe{ext}", "is a FIFO (named pipe), not a regular file")


@pytest.mark.parametrize("read", READERS)
def test_a_device_image_is_refused(tmp_path: Path, read):
    (tmp_path / "zero.exr").symlink_to("/dev/zero")
    refused(read, tmp_path / "zero.exr", "is a character device")


@pytest.mark.parametrize("read", READERS)
def test_a_symlink_loop_image_is_one_line(tmp_path: Path, read):
    (tmp_path / "a.exr").symlink_to(tmp_path / "b.exr")
    (tmp_path / "b.exr").symlink_to(tmp_path / "a.exr")
    refused(read, tmp_path / "a.exr", "symbolic link loop")


def test_every_exr_read_asks_for_separate_channels():
    # The binding's RGB merging (separate_channels=False) had heap overflows before openexr 3.4.14.
    import OpenEXR

    assert tuple(int(v) for v in OpenEXR.__version__.split(".")[:3]) >= (3, 4, 14)
    source = Path(__file__).parents[2] / "oxi_cli"
    for path in source.rglob("*.py"):
        for call in re.findall(r"OpenEXR\.File\(str\([^)]*\)[^)]*\)", path.read_text()):
            assert "separate_channels=True" in call, (path, call)


@pytest.mark.parametrize("read", READERS)
def test_a_jpeg_claiming_more_pixels_than_its_bytes_can_hold_is_refused(tmp_path: Path, read, capfd):
    import imageio.v3 as iio

    iio.imwrite(tmp_path / "ok.jpg", np.full((16, 16, 3), 128, np.uint8), extension=".jpg")
    data = bytearray((tmp_path / "ok.jpg").read_bytes())
    sof = data.index(b"\xff\xc0")
    struct.pack_into(">HH", data, sof + 5, 60000, 60000)  # height, width
    (tmp_path / "big.jpg").write_bytes(bytes(data))
    refused(read, tmp_path / "big.jpg", "claims 60000x60000 pixels")
    assert capfd.readouterr().err == ""  # nor Pillow's DecompressionBombWarning
