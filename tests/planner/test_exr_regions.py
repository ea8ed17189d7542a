"""EXR by regions: bands read equal the whole file; band-written files equal what the whole-image writer writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from oxi_cli.errors import InputError, ProcessingError
from oxi_cli.io import read_image, write_image
from oxi_cli.io.exr import COMPRESSIONS
from oxi_cli.io.exr_stream import ExrBandWriter, ExrRegionReader, band_header
from tests.io.files import assert_same_planes, bits, box, planes, read_exr, write_exr

SHAPE = (77, 53)  # odd: bands of 13 rows cross ZIP's 16-row and PIZ's 32-row chunks and 8-row tiles


def _mixed() -> dict[str, np.ndarray]:
    return {
        **planes("RGBA", SHAPE, "half", seed=1),
        **planes(["Z"], SHAPE, "float", 2),
        **planes(["id"], SHAPE, "uint32", 3),
    }


def _tiled(**header):
    tiles = OpenEXR.TileDescription()
    tiles.xSize, tiles.ySize = 16, 8
    return {"type": OpenEXR.tiledimage, "tiles": tiles, **header}


@pytest.mark.parametrize(
    "header",
    [
        {},
        {"dataWindow": box(5, -3, 5 + SHAPE[1] - 1, -3 + SHAPE[0] - 1), "compression": OpenEXR.PIZ_COMPRESSION},
        _tiled(compression=OpenEXR.ZIP_COMPRESSION),
    ],
    ids=["scanline", "offset-window-piz", "tiled"],
)
def test_bands_read_equal_the_whole_file(tmp_path: Path, header: dict):
    src = write_exr(tmp_path / "in.exr", _mixed(), **header)
    whole = read_image(src)
    with ExrRegionReader(src) as reader:
        assert (reader.width, reader.height) == (whole.width, whole.height)
        bands = [reader.read_rows(y, min(y + 13, reader.height)) for y in range(0, reader.height, 13)]
    for name, plane in whole.planes.items():
        np.testing.assert_array_equal(bits(np.concatenate([b[name] for b in bands])), bits(plane), err_msg=name)


def _write_in_bands(src: Path, dst: Path, rows: int, compression: str | None = None) -> None:
    with ExrRegionReader(src) as reader:
        header = band_header(reader.spec.meta, reader.width, reader.height, compression)
        writer = ExrBandWriter(dst, header, reader.spec.meta.pixel_types)
        for y in range(0, reader.height, rows):
            writer.write_rows(reader.read_rows(y, min(y + rows, reader.height)))
        writer.close()


ATTRIBUTES = {
    "chromaticities": (0.713, 0.293, 0.165, 0.830, 0.128, 0.044, 0.32168, 0.33767),
    "owner": "sh010_comp_v003",
    "exposure": 1.75,
    "frame": 1042,
    "focus": np.array([0.25, 7.5], dtype=np.float32),
    "offset2i": np.array([3, -4], dtype=np.int32),
    "cameraPosition": np.array([1.5, 2.5, -3.0], dtype=np.float32),
    "worldToCamera": np.arange(16, dtype=np.float32).reshape(4, 4),
    "aVeryLongAttributeNameBeyondThirtyOneCharacters": "long names set a version flag",
    "dataWindow": box(5, -3, 5 + SHAPE[1] - 1, -3 + SHAPE[0] - 1),
    "displayWindow": box(0, 0, 99, 79),
}


@pytest.mark.parametrize("codec", ["none", "rle", "zips", "zip", "piz", "pxr24", "b44", "dwaa", "zstd"])
def test_band_written_file_equals_the_whole_image_writer_byte_for_byte_in_its_header(tmp_path: Path, codec: str):
    src = write_exr(tmp_path / "in.exr", _mixed(), compression=COMPRESSIONS[codec], **ATTRIBUTES)
    write_image(read_image(src), tmp_path / "whole.exr")
    _write_in_bands(src, tmp_path / "bands.exr", rows=13)
    want_header, want = read_exr(tmp_path / "whole.exr")
    got_header, got = read_exr(tmp_path / "bands.exr")
    assert {k: repr(v) for k, v in got_header.items()} == {k: repr(v) for k, v in want_header.items()}
    assert_same_planes(got, want)
    whole_bytes, band_bytes = (tmp_path / "whole.exr").read_bytes(), (tmp_path / "bands.exr").read_bytes()
    header_end = whole_bytes.index(b"long names set a version flag") + 40
    assert band_bytes[:header_end] == whole_bytes[:header_end]


def test_a_tiled_bottom_up_input_is_band_written_as_top_down_scanlines(tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", _mixed(), **_tiled(lineOrder=OpenEXR.DECREASING_Y))
    _write_in_bands(src, tmp_path / "bands.exr", rows=10)
    header, got = read_exr(tmp_path / "bands.exr")
    assert header["type"] == OpenEXR.scanlineimage and "tiles" not in header
    assert header["lineOrder"] == OpenEXR.INCREASING_Y
    assert_same_planes(got, read_exr(src)[1])


def test_the_writer_refuses_bands_of_the_wrong_type_or_size(tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", planes("RGB", SHAPE, "half", seed=4))
    with ExrRegionReader(src) as reader:
        header = band_header(reader.spec.meta, reader.width, reader.height)
        writer = ExrBandWriter(tmp_path / "out.exr", header, reader.spec.meta.pixel_types)
        band = reader.read_rows(0, 10)
    with pytest.raises(ProcessingError, match="not half"):
        writer.write_rows({**band, "G": band["G"].astype(np.float32)})
    with pytest.raises(ProcessingError, match="differ in height"):
        writer.write_rows({**band, "B": band["B"][:5]})
    writer.write_rows(band)
    with pytest.raises(ProcessingError, match="only 10 of 77 rows"):
        writer.close()


def test_a_truncated_file_is_refused_before_any_band_without_library_noise(tmp_path: Path, capfd):
    src = write_exr(tmp_path / "in.exr", planes("RGBA", (512, 256), "half", seed=5))
    cut = tmp_path / "cut.exr"
    cut.write_bytes(src.read_bytes()[: src.stat().st_size * 2 // 3])
    with pytest.raises(InputError, match="truncated or corrupt.*re-copy it"):
        ExrRegionReader(cut)
    assert capfd.readouterr() == ("", "")
