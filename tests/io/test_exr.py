"""EXR round trips through read_image/write_image keep what the input file had."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from oxi_cli.errors import UsageError
from oxi_cli.image import Image, from_float32, to_float32
from oxi_cli.io import read_image, read_spec, set_io_threads, write_image
from oxi_cli.io.exr import COMPRESSIONS
from tests.io.files import assert_same_planes, box, planes, read_exr, read_exr_parts, window, write_exr

SHAPE = (37, 53)  # odd sizes: chunk and tile edges never line up with the image
LOSSLESS = ["none", "rle", "zips", "zip", "piz", "zstd", "htj2k256"]
LOSSY = ["pxr24", "b44", "b44a", "dwaa", "dwab"]


def copy(src: Path, dst: Path, **kwargs) -> Image:
    image = read_image(src)
    write_image(image, dst, **kwargs)
    return image


@pytest.mark.parametrize("kind", ["half", "float", "uint32"])
def test_round_trip_keeps_pixel_type_and_bits(tmp_path: Path, kind: str):
    want = planes("RGBA", SHAPE, kind, seed=1)
    src = write_exr(tmp_path / "in.exr", want)
    copy(src, tmp_path / "out.exr")
    _, got = read_exr(tmp_path / "out.exr")
    assert_same_planes(got, want)


def test_mixed_pixel_types_per_channel_survive(tmp_path: Path):
    want = {
        **planes("RGB", SHAPE, "half", seed=2),
        **planes(["Z"], SHAPE, "float", 5),
        **planes(["id"], SHAPE, "uint32", 6),
    }
    src = write_exr(tmp_path / "in.exr", want)
    image = copy(src, tmp_path / "out.exr")
    assert image.meta.pixel_types == {"R": "half", "G": "half", "B": "half", "Z": "float", "id": "uint32"}
    assert_same_planes(read_exr(tmp_path / "out.exr")[1], want)


@pytest.mark.parametrize("codec", LOSSLESS)
def test_lossless_codecs_are_kept_and_bit_exact(tmp_path: Path, codec: str):
    want = planes("RGBA", SHAPE, "half", seed=3)
    src = write_exr(tmp_path / "in.exr", want, compression=COMPRESSIONS[codec])
    image = copy(src, tmp_path / "out.exr")
    assert image.meta.compression == codec
    header, got = read_exr(tmp_path / "out.exr")
    assert header["compression"] == COMPRESSIONS[codec]
    assert_same_planes(got, want)


@pytest.mark.parametrize("codec", LOSSY)
def test_lossy_codecs_are_kept(tmp_path: Path, codec: str):
    src = write_exr(tmp_path / "in.exr", planes("RGB", SHAPE, "half", seed=4), compression=COMPRESSIONS[codec])
    image = copy(src, tmp_path / "out.exr")
    assert image.meta.compression == codec
    assert read_exr(tmp_path / "out.exr")[0]["compression"] == COMPRESSIONS[codec]


def test_tiled_input_stays_tiled_with_its_tile_size(tmp_path: Path):
    tiles = OpenEXR.TileDescription()
    tiles.xSize, tiles.ySize = 16, 8
    want = planes("RGB", SHAPE, "float", seed=5)
    src = write_exr(
        tmp_path / "in.exr", want, type=OpenEXR.tiledimage, tiles=tiles, compression=OpenEXR.PIZ_COMPRESSION
    )
    copy(src, tmp_path / "out.exr")
    header, got = read_exr(tmp_path / "out.exr")
    assert header["type"] == OpenEXR.tiledimage
    assert (header["tiles"].xSize, header["tiles"].ySize) == (16, 8)
    assert header["compression"] == OpenEXR.PIZ_COMPRESSION
    assert_same_planes(got, want)


def test_attributes_survive_including_chromaticities_and_custom_ones(tmp_path: Path):
    chroma = (0.713, 0.293, 0.165, 0.830, 0.128, 0.044, 0.32168, 0.33767)  # ACES AP1
    attrs = {
        "chromaticities": chroma,
        "shot": "sh010_comp_v003",
        "exposure": 1.75,
        "frame": 1042,
        "focus": np.array([0.25, 7.5], dtype=np.float32),
        "pixelAspectRatio": 2.0,
        "lineOrder": OpenEXR.DECREASING_Y,
    }
    src = write_exr(tmp_path / "in.exr", planes("RGBA", SHAPE, "half", seed=6), **attrs)
    copy(src, tmp_path / "out.exr")
    header, _ = read_exr(tmp_path / "out.exr")
    np.testing.assert_allclose(header["chromaticities"], chroma, rtol=1e-7)
    assert header["shot"] == "sh010_comp_v003"
    assert header["exposure"] == 1.75 and isinstance(header["exposure"], float)
    assert header["frame"] == 1042
    np.testing.assert_array_equal(header["focus"], attrs["focus"])
    assert header["pixelAspectRatio"] == 2.0
    assert header["lineOrder"] == OpenEXR.DECREASING_Y


def test_aov_layers_pass_through_and_channels_come_in_rgba_order(tmp_path: Path):
    want = {
        **planes("RGBA", SHAPE, "half", seed=7),
        **planes(["diffuse.R", "diffuse.G", "diffuse.B", "Z"], SHAPE, "half", 11),
    }
    src = write_exr(tmp_path / "in.exr", want)
    image = copy(src, tmp_path / "out.exr")
    assert image.channels == ["R", "G", "B", "A", "Z", "diffuse.R", "diffuse.G", "diffuse.B"]
    assert_same_planes(read_exr(tmp_path / "out.exr")[1], want)


def test_offset_data_window_is_the_image_and_both_windows_are_kept(tmp_path: Path):
    h, w = SHAPE
    data = box(5, -3, 5 + w - 1, -3 + h - 1)
    display = box(0, 0, 99, 79)
    want = planes("RGB", SHAPE, "half", seed=8)
    src = write_exr(tmp_path / "in.exr", want, dataWindow=data, displayWindow=display)
    image = copy(src, tmp_path / "out.exr")
    assert (image.width, image.height) == (w, h)
    header, got = read_exr(tmp_path / "out.exr")
    assert window(header["dataWindow"]) == window(data)
    assert window(header["displayWindow"]) == window(display)
    assert_same_planes(got, want)


def test_a_resized_image_scales_both_windows_from_the_origin(tmp_path: Path):
    src = write_exr(
        tmp_path / "in.exr",
        planes("RGB", (48, 64), "half", seed=9),
        dataWindow=box(5, 7, 68, 54),  # 64x48 at (5, 7)
        displayWindow=box(0, 0, 79, 59),  # 80x60
    )
    image = read_image(src)
    half_size = {name: p[::2, ::2] for name, p in image.planes.items()}  # stand-in for a real resize to 32x24
    write_image(Image(32, 24, half_size, image.meta), tmp_path / "out.exr")
    header, got = read_exr(tmp_path / "out.exr")
    # Scale 0.5: origin (2.5, 3.5) rounds half up to (3, 4); the display window becomes 40x30.
    assert window(header["dataWindow"]) == (3, 4, 3 + 32 - 1, 4 + 24 - 1)
    assert window(header["displayWindow"]) == (0, 0, 39, 29)
    assert got["R"].shape == (24, 32)


def test_a_resize_of_a_full_frame_image_keeps_the_windows_equal(tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", planes("RGB", SHAPE, "half", seed=10))
    image = read_image(src)
    bigger = {name: np.repeat(np.repeat(p, 3, 0), 3, 1)[:100, :150] for name, p in image.planes.items()}
    write_image(Image(150, 100, bigger, image.meta), tmp_path / "out.exr")
    header, _ = read_exr(tmp_path / "out.exr")
    assert window(header["dataWindow"]) == window(header["displayWindow"]) == (0, 0, 149, 99)


def _two_part_file(path: Path) -> tuple[dict, dict]:
    beauty = planes("RGBA", SHAPE, "half", seed=12)
    depth = planes(["Z"], (9, 17), "float", seed=13)
    display = box(0, 0, SHAPE[1] - 1, SHAPE[0] - 1)
    parts = [
        OpenEXR.Part({"compression": OpenEXR.ZIP_COMPRESSION, "displayWindow": display}, dict(beauty), "beauty"),
        OpenEXR.Part(
            {"compression": OpenEXR.PIZ_COMPRESSION, "displayWindow": display, "dataWindow": box(2, 3, 18, 11)},
            dict(depth),
            "depth",
        ),
    ]
    OpenEXR.File(parts).write(str(path))
    return beauty, depth


def test_multi_part_reads_every_part_and_writes_them_back_untouched(tmp_path: Path):
    beauty, depth = _two_part_file(tmp_path / "in.exr")
    image = copy(tmp_path / "in.exr", tmp_path / "out.exr")
    assert image.channels == ["R", "G", "B", "A"]
    assert [(p.meta.header["name"], p.channels, p.width, p.height) for p in image.parts] == [("depth", ["Z"], 17, 9)]
    (name0, _, got0), (name1, header1, got1) = read_exr_parts(tmp_path / "out.exr")
    assert (name0, name1) == ("beauty", "depth")
    assert_same_planes(got0, beauty)
    assert_same_planes(got1, depth)
    assert header1["compression"] == OpenEXR.PIZ_COMPRESSION
    assert window(header1["dataWindow"]) == (2, 3, 18, 11)


@pytest.mark.skipif(shutil.which("oiiotool") is None, reason="needs oiiotool (PyPI openimageio) to make mip-maps")
def test_mipmapped_input_is_written_as_one_level(tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", planes("RGB", (32, 32), "half", seed=14))
    # OpenEXR.File can't write mip levels, so let oiiotool make a real mip-mapped file from our planes.
    subprocess.run(["oiiotool", str(src), "--tile", "16", "16", "-otex", str(tmp_path / "mip.exr")], check=True)
    mip_header, level0 = read_exr(tmp_path / "mip.exr")  # oiiotool clamps ±Inf, so compare with its level 0
    assert mip_header["tiles"].mode == OpenEXR.MIPMAP_LEVELS
    copy(tmp_path / "mip.exr", tmp_path / "out.exr")
    header, got = read_exr(tmp_path / "out.exr")
    assert header["tiles"].mode == OpenEXR.ONE_LEVEL
    assert header["type"] == OpenEXR.tiledimage
    assert_same_planes(got, level0)


def test_float32_working_planes_are_stored_as_the_requested_types(tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", planes("RGBA", SHAPE, "half", seed=15))
    image = read_image(src)
    work = {name: to_float32(p, "half") * np.float32(3.0) for name, p in image.planes.items()}
    types = {"R": "float", "G": "half", "B": "half", "A": "float"}
    write_image(Image(image.width, image.height, work, replace(image.meta, pixel_types=types)), tmp_path / "o.exr")
    _, got = read_exr(tmp_path / "o.exr")
    assert_same_planes(got, {name: from_float32(work[name], kind) for name, kind in types.items()})


def test_exr_refuses_8_and_16_bit_integers_and_says_which_out_type_to_use(tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", planes("RGB", SHAPE, "half", seed=16))
    image = read_image(src)
    meta = replace(image.meta, pixel_types=dict.fromkeys(image.planes, "uint16"))
    with pytest.raises(UsageError, match="--out-type half or float"):
        write_image(Image(image.width, image.height, image.planes, meta), tmp_path / "out.exr")
    assert list(tmp_path.iterdir()) == [src]


def test_compression_override_by_name(tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", planes("RGB", SHAPE, "float", seed=17))
    copy(src, tmp_path / "out.exr", compression="DWAA")
    assert read_exr(tmp_path / "out.exr")[0]["compression"] == OpenEXR.DWAA_COMPRESSION


def test_unknown_compression_lists_the_valid_names(tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", planes("RGB", SHAPE, "float", seed=18))
    with pytest.raises(UsageError, match="unknown EXR compression 'zipp'; use one of none, rle, zips, zip, piz"):
        copy(src, tmp_path / "out.exr", compression="zipp")


def test_read_spec_matches_the_decoded_image_without_reading_pixels(tmp_path: Path):
    want = {**planes("RGBA", SHAPE, "half", seed=19), "Z": planes(["Z"], SHAPE, "float", 20)["Z"]}
    want["id"] = planes(["id"], SHAPE, "uint32", 21)["id"]
    src = write_exr(tmp_path / "in.exr", want, dataWindow=box(3, 4, 3 + SHAPE[1] - 1, 4 + SHAPE[0] - 1), shot="a")
    spec, image = read_spec(src), read_image(src)
    assert (spec.width, spec.height) == (image.width, image.height) == (SHAPE[1], SHAPE[0])
    assert spec.channels == image.channels
    assert spec.meta.pixel_types == image.meta.pixel_types
    assert spec.meta.compression == image.meta.compression == "zip"
    assert spec.meta.header["shot"] == "a"


def test_set_io_threads_sets_openexr_threads():
    set_io_threads(3)
    assert OpenEXR.global_thread_count() == 3
    set_io_threads(None)
    assert OpenEXR.global_thread_count() >= 1
