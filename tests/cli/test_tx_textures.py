"""Textures by their names: a `.tx` (a tiled, mip-mapped TIFF as maketx writes it) is read as the TIFF it is, its
top level with --mip-level 0 as an EXR texture's; a `.tx` output is a one-level tiled TIFF, said once."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tifffile

from tests.cli.conftest import hdr_rgba, run_oxi, write_exr
from tests.cli.test_cli_errors import assert_one_line_error
from tests.oiio_tools import maketx, needs_maketx

pytestmark = needs_maketx


def _oiio_top_level(path: Path, kind: str = "float") -> np.ndarray:
    """The pixels OpenImageIO reads from a file's first subimage, MIP level 0, as `kind` (H, W, C)."""
    import OpenImageIO as oiio

    buf = oiio.ImageBuf(str(path))
    assert buf.nmiplevels >= 1, buf.geterror()
    return np.asarray(buf.get_pixels(oiio.UINT8 if kind == "uint8" else oiio.FLOAT))


@pytest.fixture(scope="module")
def textures(tmp_path_factory) -> dict[str, Path]:
    """maketx's textures of a 97x61 RGBA plate: float (from a float EXR) and 8-bit (-d uint8)."""
    folder = tmp_path_factory.mktemp("tx")
    src = write_exr(folder / "plate.exr", hdr_rgba(61, 97, seed=4), half=False, aovs=False)
    made = {"float": folder / "plate_float.tx", "uint8": folder / "plate_uint8.tx"}
    maketx(str(src), "-o", str(made["float"]))
    maketx(str(src), "-d", "uint8", "-o", str(made["uint8"]))
    return made


@pytest.mark.parametrize("depth", ["float", "uint8"])
def test_a_tx_is_refused_for_its_levels_not_its_extension(textures: dict[str, Path], tmp_path: Path, depth: str):
    res = run_oxi("cdl", str(textures[depth]), str(tmp_path / "out.tif"), "--slope", "1.1")
    assert_one_line_error(res, 2, "mip-mapped", "--mip-level 0", "maketx")
    assert not (tmp_path / "out.tif").exists()


@pytest.mark.parametrize("depth", ["float", "uint8"])
def test_mip_level_0_reads_the_top_level_as_openimageio_does(textures: dict[str, Path], tmp_path: Path, depth: str):
    out = tmp_path / "top.tif"
    res = run_oxi("run", str(textures[depth]), str(out), "--mip-level", "0")
    assert res.returncode == 0, res.stderr
    got = tifffile.imread(out)
    want = _oiio_top_level(textures[depth], depth)
    assert got.shape == want.shape == (61, 97, 4) and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    with tifffile.TiffFile(out) as tif:
        assert len(tif.pages) == 1 and tif.pages[0].is_tiled  # the input's 64x64 tiles kept, one level
        assert (tif.pages[0].tilewidth, tif.pages[0].tilelength) == (64, 64)


def test_info_says_a_tx_is_mip_mapped(textures: dict[str, Path]):
    res = run_oxi("info", str(textures["float"]), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert (doc["width"], doc["height"], doc["levels"]) == (97, 61, "mipmap")
    assert doc["attributes"]["tile"] == [64, 64]


def test_a_tx_output_is_a_one_level_tiled_tiff_said_once(tmp_path: Path):
    plates = [write_exr(tmp_path / f"p{i}.exr", hdr_rgba(40, 70, seed=i), half=False, aovs=False) for i in range(2)]
    out = tmp_path / "tex"
    res = run_oxi("cdl", *map(str, plates), "-o", str(out), "--name", "{stem}.tx", "--slope", "1.1")
    assert res.returncode == 0, res.stderr
    warnings = [ln for ln in res.stderr.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and "one-level tiled TIFF" in warnings[0] and "maketx" in warnings[0], res.stderr
    plain = tmp_path / "p0.tif"
    assert run_oxi("cdl", str(plates[0]), str(plain), "--slope", "1.1").returncode == 0
    for i in range(2):
        with tifffile.TiffFile(out / f"p{i}.tx") as tif:
            assert len(tif.pages) == 1
            page = tif.pages[0]
            assert page.is_tiled and (page.tilewidth, page.tilelength) == (64, 64)
            pixels = page.asarray()
        np.testing.assert_array_equal(_oiio_top_level(out / f"p{i}.tx"), pixels)  # a TIFF to OpenImageIO too
    np.testing.assert_array_equal(tifffile.imread(out / "p0.tx"), tifffile.imread(plain))  # the .tif's pixels


def test_maketx_builds_the_levels_of_a_tx_output(tmp_path: Path):
    """What the warning tells the user to run works on oxi's .tx in place."""
    src = write_exr(tmp_path / "p.exr", hdr_rgba(40, 70, seed=3), half=False, aovs=False)
    out = tmp_path / "p.tx"
    assert run_oxi("cdl", str(src), str(out), "--slope", "1.1").returncode == 0
    maketx(str(out), "-o", str(out))
    import OpenImageIO as oiio

    assert oiio.ImageBuf(str(out)).nmiplevels == 7  # 70x40 down to 1x1
    res = run_oxi("info", str(out), "--json")
    assert json.loads(res.stdout)["levels"] == "mipmap"
