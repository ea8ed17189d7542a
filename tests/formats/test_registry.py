"""Choosing the parser by extension, and the errors for missing files, folders and unknown extensions."""

from __future__ import annotations

import pytest

from oxi_cli.errors import InputError, UsageError
from oxi_cli.formats.registry import load_cdl, load_lut
from oxi_cli.ops import Cdl, Lut1d, Lut3d
from tests.formats.files import random_rows, rows_text, write


def test_extension_picks_the_parser_in_any_case(tmp_path):
    rows = random_rows(8)
    assert isinstance(load_lut(write(tmp_path / "a.CUBE", "LUT_3D_SIZE 2\n" + rows_text(rows)))[0], Lut3d)
    spi1d = "Version 1\nLength 2\nComponents 1\n{\n0.25\n0.5\n}\n"
    assert isinstance(load_lut(write(tmp_path / "b.Spi1D", spi1d))[0], Lut1d)
    cc = '<ColorCorrection id="x"><SatNode><Saturation>0.5</Saturation></SatNode></ColorCorrection>'
    assert load_cdl(write(tmp_path / "c.CC", cc)) == Cdl(sat=0.5)


@pytest.mark.parametrize("name", ["look.csp", "look", "look.cube.txt"])
def test_unknown_lut_extension_lists_the_supported_ones(tmp_path, name):
    with pytest.raises(InputError, match=r"unknown LUT extension .*supported: \.cube, \.3dl, \.spi3d, \.spi1d"):
        load_lut(write(tmp_path / name, "LUT_3D_SIZE 2\n"))


def test_unknown_cdl_extension_lists_the_supported_ones(tmp_path):
    with pytest.raises(InputError, match=r"unknown CDL extension '\.xml'; supported: \.cc, \.ccc, \.cdl"):
        load_cdl(write(tmp_path / "look.xml", "<ColorCorrection/>"))


def test_missing_files_say_so(tmp_path):
    with pytest.raises(InputError, match=f"^LUT file not found: {tmp_path / 'nope.cube'}$"):
        load_lut(tmp_path / "nope.cube")
    with pytest.raises(InputError, match=f"^CDL file not found: {tmp_path / 'nope.ccc'}$"):
        load_cdl(str(tmp_path / "nope.ccc"))


def test_folder_is_not_a_lut(tmp_path):
    (tmp_path / "dir.cube").mkdir()
    with pytest.raises(InputError, match="is a folder, not a file"):
        load_lut(tmp_path / "dir.cube")


def test_unknown_interpolation_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="--interp must be one of tetrahedral, trilinear"):
        load_lut(write(tmp_path / "a.cube", "LUT_3D_SIZE 2\n" + rows_text(random_rows(8))), "cubic")
