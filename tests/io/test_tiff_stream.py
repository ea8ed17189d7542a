"""TIFF read by bands of rows (io/tiff_stream.py): every band as the whole decode gives it, TIFFs that must go whole
say why, a streamed TIFF input gives the single pass's output, and a big TIFF's statistics take a band's memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tifffile

from oxi_cli.io.raster import read_tiff
from oxi_cli.io.tiff_stream import TiffRegionReader, region_blocker
from tests.io.files import read_exr
from tests.io.test_png_stream import _oxi, _peak_rss

KINDS = [
    ((100, 70, 3), np.uint16, {"compression": "zlib", "predictor": True, "rowsperstrip": 16, "photometric": "rgb"}),
    ((64, 50), np.uint8, {"compression": "lzw", "rowsperstrip": 7}),
    ((40, 30, 4), np.float32, {"compression": "zlib", "rowsperstrip": 5, "photometric": "rgb", "extrasamples": [2]}),
    ((33, 20, 3), np.float64, {"photometric": "rgb"}),
]


def _tiff(path: Path, shape: tuple[int, ...], dtype: type, seed: int = 0, **settings: object) -> Path:
    rng = np.random.default_rng(seed)
    scale = np.iinfo(dtype).max if np.issubdtype(dtype, np.integer) else 4.0
    tifffile.imwrite(path, (rng.random(shape) * scale).astype(dtype), **settings)
    return path


@pytest.mark.parametrize(("shape", "dtype", "settings"), KINDS, ids=[f"{k[0]}-{k[1].__name__}" for k in KINDS])
def test_every_band_is_what_the_whole_decode_gives(tmp_path: Path, shape, dtype, settings):
    path = _tiff(tmp_path / "t.tif", shape, dtype, **settings)
    assert region_blocker(path) is None
    whole = read_tiff(path)
    with TiffRegionReader(path) as reader:
        for start, stop in [(0, shape[0]), (3, 9), (5, shape[0]), (0, 1)]:
            got = reader.read_rows(start, stop)
            for name, plane in whole.planes.items():
                assert got[name].dtype == plane.dtype and np.array_equal(got[name], plane[start:stop]), name


def test_tiffs_that_go_whole_say_why_and_still_read(tmp_path: Path):
    cases = {
        "a tiled TIFF is read whole": {"tile": (16, 16), "photometric": "rgb"},
        "a TIFF with its samples in separate planes is read whole": {"planarconfig": "separate", "photometric": "rgb"},
    }
    for reason, settings in cases.items():
        path = _tiff(tmp_path / "whole.tif", (40, 40, 3), np.uint8, **settings)
        assert region_blocker(path) == reason
        stats = _oxi("info", str(path), "--stats", "--json")
        assert stats.returncode == 0, stats.stderr


def test_a_streamed_tiff_input_gives_the_single_pass_output(tmp_path: Path):
    src = _tiff(tmp_path / "in.tif", (300, 257, 3), np.uint16, seed=3, compression="zlib", rowsperstrip=13,
                photometric="rgb")
    outs = {}
    for strategy in ("streaming", "single"):
        outs[strategy] = tmp_path / f"{strategy}.exr"
        done = _oxi("blur", str(src), str(outs[strategy]), "--sigma", "1.5", "--strategy", strategy, "--out-type",
                    "float")
        assert done.returncode == 0, done.stderr
    banded, whole = read_exr(outs["streaming"])[1], read_exr(outs["single"])[1]
    for name in whole:
        assert np.array_equal(banded[name], whole[name]), name


def test_stats_of_a_big_tiff_take_a_band_of_memory_not_the_image(tmp_path: Path):
    small = tmp_path / "small.tif"
    tifffile.imwrite(small, np.zeros((100, 100, 3), np.uint8), compression="zlib", photometric="rgb")
    big = tmp_path / "big.tif"  # 412 MiB decoded, 1.6 GiB as float32
    tifffile.imwrite(big, np.zeros((12000, 12000, 3), np.uint8), compression="zlib", rowsperstrip=64,
                     photometric="rgb")
    extra = _peak_rss("info", str(big), "--stats") - _peak_rss("info", str(small), "--stats")
    assert extra < 200 << 20, f"{extra / 2**20:.0f} MiB more than for a 100x100 TIFF"
