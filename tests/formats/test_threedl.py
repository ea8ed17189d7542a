""".3dl parsing (Flame and Lustre layouts, integer codes, bit-depth guess, mesh) against OpenColorIO, and errors."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.formats.registry import load_lut
from oxi_cli.formats.threedl import likely_bit_depth
from oxi_cli.ops import Lut1d, Lut3d
from tests.formats.files import expect_error, rows_text, write
from tests.formats.oracle import assert_ops_match_ocio, grid_inputs_3d, ocio_apply_file

GRID_ATOL = 1e-5
MESH_10BIT_5 = "0 256 512 767 1023"  # an even 10-bit ramp for 5 grid points, within OCIO's 2-code slack


def int_rows(n_rows: int, top: int, seed: int) -> np.ndarray:
    """Integer code values 0..top, with `top` itself present so the bit-depth guess is pinned."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, top, size=(n_rows, 3))
    rows[n_rows // 2, 1] = top
    return rows


def threedl(rows: np.ndarray, mesh: str | None = MESH_10BIT_5, lustre: bool = False) -> str:
    text = "# written by a test\n"
    if lustre:
        text += "3DMESH\nMesh 2 12\n"
    if mesh is not None:
        text += mesh + "\n\n"
    text += rows_text(rows, "%d")
    if lustre:
        text += "\n#Tokens required by applications - do not edit\n\nLUT8\ngamma 1.0\n"
    return text


@pytest.mark.parametrize("lustre", [False, True], ids=["flame", "lustre"])
def test_3dl_matches_ocio_blue_fastest_12bit(tmp_path, lustre):
    rows = int_rows(125, 4095, seed=1)
    path = write(tmp_path / "look.3dl", threedl(rows, lustre=lustre))
    ops = load_lut(path)
    assert len(ops) == 1 and isinstance(ops[0], Lut3d)
    # Blue changes fastest: row k is grid point (r, g, b) = (k // 25, k // 5 % 5, k % 5).
    np.testing.assert_array_equal(ops[0].table[1, 2, 3], rows[1 * 25 + 2 * 5 + 3].astype(np.float32) / np.float32(4095))
    assert_ops_match_ocio(ops, path)
    got = ocio_apply_file(path, grid_inputs_3d(ops[0]), OCIO.INTERP_TETRAHEDRAL)
    np.testing.assert_allclose(got, ops[0].table, atol=GRID_ATOL)


@pytest.mark.parametrize("top, bits", [(255, 8), (511, 8), (1023, 10), (4095, 12), (9000, 16), (65535, 16)])
def test_bit_depth_is_guessed_from_the_largest_value_as_ocio(tmp_path, top, bits):
    assert likely_bit_depth(top) == bits
    rows = int_rows(8, top, seed=top)
    path = write(tmp_path / f"depth{top}.3dl", threedl(rows, mesh="0 341 682 1023"))
    (op,) = load_lut(path)
    np.testing.assert_array_equal(op.table.reshape(-1, 3), rows.astype(np.float32) / np.float32(2**bits - 1))
    assert_ops_match_ocio([op], path)


def test_file_without_mesh_line_matches_ocio(tmp_path):
    rows = int_rows(27, 1023, seed=3)
    path = write(tmp_path / "nomesh.3dl", threedl(rows, mesh=None))
    ops = load_lut(path)
    assert len(ops) == 1
    assert_ops_match_ocio(ops, path)


def test_uneven_mesh_becomes_a_shaper_as_in_ocio(tmp_path):
    rows = int_rows(27, 4095, seed=4)
    path = write(tmp_path / "shaper.3dl", threedl(rows, mesh="0 100 300 600 1023"))
    ops = load_lut(path)
    assert [type(op) for op in ops] == [Lut1d, Lut3d]
    np.testing.assert_array_equal(ops[0].table[:, 0], np.array([0, 100, 300, 600, 1023], np.float32) / 1023)
    assert_ops_match_ocio(ops, path)


# --- malformed files ------------------------------------------------------------------------------------


def test_float_values_are_not_3dl_codes(tmp_path):
    lines = rows_text(int_rows(8, 1023, 5), "%d").splitlines()
    lines[4] = "12 0.5 700"
    path = write(tmp_path / "float.3dl", "0 512 1023\n" + "\n".join(lines) + "\n")
    # "0 512 1023" has 3 values: it is the first row, not a mesh, exactly as in OCIO.
    expect_error(load_lut, path, 6, "expected 3 integers per row, found '0.5'")


@pytest.mark.parametrize("row, needle", [("12 700", "found 2"), ("1 2 3 4 5", "found 5"), ("0 nan 700", "NaN/Inf")])
def test_bad_row_names_its_line(tmp_path, row, needle):
    lines = rows_text(int_rows(8, 1023, 6), "%d").splitlines()
    lines[2] = row
    path = write(tmp_path / "row.3dl", "3DMESH\nMesh 1 10\n0 341 682 1023\n" + "\n".join(lines) + "\n")
    expect_error(load_lut, path, 6, needle)


def test_row_count_must_be_a_cube(tmp_path):
    path = write(tmp_path / "count.3dl", threedl(int_rows(26, 1023, 7)))
    expect_error(load_lut, path, 29, "found 26 rows of 3 integers; a 3D LUT needs N\\*N\\*N rows")


def test_small_maximum_means_another_format(tmp_path):
    path = write(tmp_path / "low.3dl", threedl(int_rows(8, 100, 8), mesh=None))
    expect_error(load_lut, path, 9, "largest value is 100", "probably another format")


def test_xml_is_not_3dl(tmp_path):
    expect_error(load_lut, write(tmp_path / "x.3dl", "\n<?xml version='1.0'?>\n<a/>\n"), 2, "looks like XML")


def test_two_mesh_lines(tmp_path):
    text = f"{MESH_10BIT_5}\n{MESH_10BIT_5}\n" + rows_text(int_rows(8, 1023, 9), "%d")
    path = write(tmp_path / "two.3dl", text)
    expect_error(load_lut, path, 2, "a second input mesh line")


def test_mesh_with_a_non_integer(tmp_path):
    path = write(tmp_path / "mesh.3dl", "0 341 682.5 1023\n" + rows_text(int_rows(8, 1023, 9), "%d"))
    expect_error(load_lut, path, 1, "input mesh: expected an integer, found '682.5'")
