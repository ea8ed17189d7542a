"""What an output loses is said, once per run, one line each, for every input format: values an integer file
clips, and channels its format cannot hold."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import tifffile

from tests.cli.conftest import hdr_rgba, run_oxi, write_exr

SLOPE = 1.3


def _lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip()]


def _percent(line: str) -> float:
    return float(re.search(r"([0-9.]+)% of values", line).group(1))


@pytest.fixture
def tiff16(tmp_path: Path) -> Path:
    rgb = np.random.default_rng(3).integers(20000, 65535, size=(48, 64, 3), endpoint=True, dtype=np.uint16)
    path = tmp_path / "scan.tif"
    tifffile.imwrite(path, rgb, photometric="rgb")
    return path


def test_a_16_bit_tiff_graded_over_1_warns_how_much_clips_and_what_to_do(tiff16: Path, tmp_path: Path):
    out = tmp_path / "graded.tif"
    res = run_oxi("cdl", str(tiff16), str(out), "--slope", str(SLOPE))
    assert res.returncode == 0, res.stderr
    lines = _lines(res.stderr)
    assert len(lines) == 1, res.stderr
    graded = tifffile.imread(tiff16).astype(np.float32) / np.float32(65535) * np.float32(SLOPE)
    want = 100.0 * np.count_nonzero(graded > 1 + 0.5 / 65535) / graded.size
    assert abs(_percent(lines[0]) - want) < 0.15, (lines[0], want)
    assert "uint16 TIFF" in lines[0] and "--out-type float" in lines[0] and ".exr" in lines[0]
    assert (tifffile.imread(out)[graded > 1 + 0.5 / 65535] == 65535).all()  # the output is as before: clipped


def test_the_clipping_warning_comes_when_tiles_compute_the_file_too(tiff16: Path, tmp_path: Path):
    res = run_oxi("cdl", str(tiff16), str(tmp_path / "graded.tif"), "--slope", str(SLOPE), "--strategy", "tiled")
    assert res.returncode == 0, res.stderr
    single = run_oxi("cdl", str(tiff16), str(tmp_path / "single.tif"), "--slope", str(SLOPE))
    assert _lines(res.stderr) == _lines(single.stderr) and len(_lines(res.stderr)) == 1


def test_an_8_bit_png_graded_within_range_warns_nothing(tmp_path: Path):
    import imageio.v3 as iio

    rgb = np.random.default_rng(4).integers(0, 200, size=(40, 50, 3), dtype=np.uint8)
    iio.imwrite(tmp_path / "in.png", rgb)
    res = run_oxi("cdl", str(tmp_path / "in.png"), str(tmp_path / "out.png"), "--slope", "1.2", "--sat", "0.9")
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""


def test_a_resize_of_an_8_bit_png_does_not_warn_of_its_ringing(tmp_path: Path):
    import imageio.v3 as iio

    checker = (np.indices((64, 64)).sum(axis=0) % 2 * 255).astype(np.uint8)
    iio.imwrite(tmp_path / "in.png", np.stack([checker] * 3, axis=-1))
    res = run_oxi("resize", str(tmp_path / "in.png"), str(tmp_path / "out.png"), "--width", "40")
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""


def test_an_rgba_png_written_as_jpeg_says_alpha_is_dropped(tmp_path: Path):
    import imageio.v3 as iio

    rgba = np.random.default_rng(5).integers(0, 255, size=(30, 40, 4), dtype=np.uint8)
    iio.imwrite(tmp_path / "logo.png", rgba)
    res = run_oxi("cdl", str(tmp_path / "logo.png"), str(tmp_path / "logo.jpg"), "--sat", "0.9")
    assert res.returncode == 0, res.stderr
    lines = _lines(res.stderr)
    assert len(lines) == 1, res.stderr
    assert "channels A are not written" in lines[0] and "PNG, TIFF or EXR output keeps alpha" in lines[0]
    assert iio.imread(tmp_path / "logo.jpg").shape == (30, 40, 3)


def test_float_to_png_says_clipping_and_dropped_layers_each_on_its_own_line(tmp_path: Path):
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(37, 53))
    res = run_oxi("resize", str(plate), str(tmp_path / "thumb.png"), "--width", "16")
    assert res.returncode == 0, res.stderr
    lines = _lines(res.stderr)
    assert len(lines) == 2, res.stderr
    assert "% of values clipped" in lines[0] and "--colorspace" in lines[0]
    assert "diffuse.R, diffuse.G, diffuse.B are not written" in lines[1] and "EXR output keeps" in lines[1]


def test_a_batch_warns_once_per_kind(tiff16: Path, tmp_path: Path):
    folder = tmp_path / "scans"
    folder.mkdir()
    for i in range(3):
        (folder / f"scan{i}.tif").write_bytes(tiff16.read_bytes())
    res = run_oxi("cdl", str(folder), "-o", str(tmp_path / "out"), "--slope", str(SLOPE), "--quiet")
    assert res.returncode == 0, res.stderr
    assert len(_lines(res.stderr)) == 1, res.stderr
