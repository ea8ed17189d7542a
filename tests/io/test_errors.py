"""Bad inputs give one InputError line naming the file and what to do, with no library noise."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from oxi_cli.errors import InputError
from oxi_cli.io import read_image, read_spec
from tests.io.files import planes, write_exr

READERS = [read_image, read_spec]
EXTENSIONS = [".exr", ".png", ".tif", ".jpg"]


def error_of(read, path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)), message
    assert "Traceback" not in message
    return message


@pytest.fixture
def big_exr(tmp_path: Path) -> Path:
    return write_exr(tmp_path / "plate.exr", planes("RGBA", (96, 128), "half", seed=1))


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("ext", EXTENSIONS)
def test_missing_file(tmp_path: Path, read, ext: str):
    assert "no such file; check the path" in error_of(read, tmp_path / f"nope{ext}")


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("ext", EXTENSIONS)
def test_a_folder_is_not_an_image(tmp_path: Path, read, ext: str):
    (tmp_path / f"shots{ext}").mkdir()
    assert "is a folder, not an image file" in error_of(read, tmp_path / f"shots{ext}")


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("ext", EXTENSIONS)
def test_an_empty_file(tmp_path: Path, read, ext: str):
    (tmp_path / f"empty{ext}").touch()
    assert "is empty (0 bytes)" in error_of(read, tmp_path / f"empty{ext}")


@pytest.mark.parametrize("read", READERS)
def test_a_text_file_named_exr(tmp_path: Path, read, capfd):
    (tmp_path / "notes.exr").write_text("shot list: sh010, sh020\n" * 20)
    assert "is not an OpenEXR file" in error_of(read, tmp_path / "notes.exr")
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize(("ext", "format"), [(".png", "PNG"), (".tif", "TIFF"), (".jpg", "JPEG")])
@pytest.mark.parametrize("read", READERS)
def test_a_text_file_named_like_a_raster_image(tmp_path: Path, read, ext: str, format: str):
    (tmp_path / f"notes{ext}").write_text("shot list: sh010, sh020\n" * 20)
    assert f"{format} file" in error_of(read, tmp_path / f"notes{ext}")


@pytest.mark.parametrize("keep", [0.5, 0.98])
def test_a_truncated_exr_is_reported_without_library_noise(tmp_path: Path, big_exr: Path, keep: float, capfd):
    data = big_exr.read_bytes()
    cut = tmp_path / "cut.exr"
    cut.write_bytes(data[: int(len(data) * keep)])
    message = error_of(read_image, cut)
    assert "the EXR file is truncated or corrupt (" in message and "re-copy it" in message
    assert capfd.readouterr() == ("", "")  # OpenEXR's own stderr/stdout lines were held back


@pytest.mark.parametrize("read", READERS)
def test_an_exr_cut_inside_its_header(tmp_path: Path, big_exr: Path, read, capfd):
    cut = tmp_path / "cut.exr"
    cut.write_bytes(big_exr.read_bytes()[:40])
    assert "truncated or corrupt" in error_of(read, cut)
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize(("ext", "format"), [(".png", "PNG"), (".tif", "TIFF"), (".jpg", "JPEG")])
def test_a_truncated_raster_image(tmp_path: Path, ext: str, format: str):
    import imageio.v3 as iio

    pixels = np.random.default_rng(2).integers(1, 255, (64, 64, 3), dtype=np.uint8)
    iio.imwrite(tmp_path / f"full{ext}", pixels)
    data = (tmp_path / f"full{ext}").read_bytes()
    (tmp_path / f"cut{ext}").write_bytes(data[: len(data) // 2])
    message = error_of(read_image, tmp_path / f"cut{ext}")
    assert f"not a valid {format} file or it is truncated" in message


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("name", ["frame.bmp", "frame.exr.bak", "frame"])
def test_an_unknown_extension_lists_the_known_ones(tmp_path: Path, read, name: str):
    (tmp_path / name).write_bytes(b"\x00" * 64)
    message = error_of(read, tmp_path / name)
    assert "is not an image format oxi knows; use .exr, .png, .tif/.tiff, .tx, .jpg/.jpeg" in message


def test_overlapping_reads_in_threads_hold_back_noise_and_restore_the_streams(tmp_path: Path, big_exr: Path, capfd):
    from concurrent.futures import ThreadPoolExecutor

    cut = tmp_path / "cut.exr"
    cut.write_bytes(big_exr.read_bytes()[:20000])

    def attempt(path: Path) -> str:
        try:
            return f"{read_image(path).width}"
        except InputError as e:
            return "truncated" if "truncated or corrupt (" in str(e) else str(e)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(attempt, [big_exr, cut] * 6))
    assert results == ["128", "truncated"] * 6
    print("stdout is back")
    os.write(2, b"stderr is back\n")
    assert capfd.readouterr() == ("stdout is back\n", "stderr is back\n")


def test_a_multi_part_exr_whose_last_part_is_cut_is_an_error_not_a_silent_drop(tmp_path: Path, capfd):
    import OpenEXR

    parts = [
        OpenEXR.Part({"compression": OpenEXR.ZIP_COMPRESSION}, planes("RGB", (64, 64), "float", 3), "beauty"),
        OpenEXR.Part({"compression": OpenEXR.ZIP_COMPRESSION}, planes(["Z"], (64, 64), "float", 6), "depth"),
    ]
    OpenEXR.File(parts).write(str(tmp_path / "full.exr"))
    data = (tmp_path / "full.exr").read_bytes()
    (tmp_path / "cut.exr").write_bytes(data[: len(data) - 500])
    assert "truncated or corrupt" in error_of(read_image, tmp_path / "cut.exr")
    assert capfd.readouterr() == ("", "")


def test_subsampled_channels_are_refused_from_the_header(tmp_path: Path):
    import struct

    src = write_exr(tmp_path / "yc.exr", planes(["Y", "RY", "BY"], (8, 8), "half", 7))
    data = bytearray(src.read_bytes())
    for name in (b"RY\0", b"BY\0"):  # set x/y sampling to 2 in the chlist (OpenEXR.File can't write it)
        struct.pack_into("<ii", data, data.index(name) + len(name) + 8, 2, 2)
    src.write_bytes(bytes(data))
    assert "is subsampled (2x2), which oxi cannot process" in error_of(read_spec, src)
    error_of(read_image, src)  # the pixel data no longer match the header: still one InputError line
