""".spi1d and .spi3d parsing against OpenColorIO's reading of the same files, and their errors."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.formats.registry import load_lut
from oxi_cli.ops import Lut1d, Lut3d
from tests.formats.files import expect_error, random_rows, rows_text, write
from tests.formats.oracle import assert_ops_match_ocio, grid_inputs_1d, grid_inputs_3d, ocio_apply_file

GRID_ATOL = 1e-5


def spi1d(rows: np.ndarray, header: str | None = None) -> str:
    if header is None:
        header = f"Version 1\nFrom -0.25 1.75\nLength {rows.shape[0]}\nComponents {rows.shape[1]}\n"
    return header + "{\n" + "".join("\t" + line + "\n" for line in rows_text(rows).splitlines()) + "}\n"


@pytest.mark.parametrize("comps", [1, 2, 3])
def test_spi1d_matches_ocio(tmp_path, comps):
    rows = random_rows(11, comps, seed=comps)
    path = write(tmp_path / f"c{comps}.spi1d", spi1d(rows))
    ops = load_lut(path)
    assert len(ops) == 1 and isinstance(ops[0], Lut1d)
    op = ops[0]
    assert op.domain_min == (-0.25,) * 3 and op.domain_max == (1.75,) * 3
    want = {1: np.repeat(rows, 3, axis=1), 2: np.c_[rows, np.zeros(11, np.float32)], 3: rows}[comps]
    np.testing.assert_array_equal(op.table, want)
    assert_ops_match_ocio(ops, path)
    np.testing.assert_allclose(ocio_apply_file(path, grid_inputs_1d(op)), want, atol=GRID_ATOL)


def test_spi1d_without_from_has_the_unit_domain(tmp_path):
    rows = random_rows(4, 1, seed=9)
    (op,) = load_lut(write(tmp_path / "unit.spi1d", spi1d(rows, "Version 1\nLength 4\nComponents 1\n")))
    assert op.domain_min == (0.0,) * 3 and op.domain_max == (1.0,) * 3


def spi3d(rows: np.ndarray, size: int, order: np.ndarray | None = None) -> str:
    """Rows 'r g b R G B' for grid point (r, g, b) = table index, written in `order` (any order is legal)."""
    idx = np.array(np.unravel_index(np.arange(size**3), (size,) * 3)).T
    order = np.arange(size**3) if order is None else order
    values = rows_text(rows).splitlines()
    lines = [f"{' '.join(map(str, idx[k]))} {values[k]}" for k in order]
    return f"SPILUT 1.0\n3 3\n{size} {size} {size}\n" + "\n".join(lines) + "\n"


def test_spi3d_in_shuffled_order_matches_ocio(tmp_path):
    size = 4
    rows = random_rows(size**3, seed=10)  # row k is grid point np.unravel_index(k): r slowest, b fastest
    order = np.random.default_rng(0).permutation(size**3)
    path = write(tmp_path / "shuffled.spi3d", spi3d(rows, size, order))
    ops = load_lut(path)
    assert len(ops) == 1 and isinstance(ops[0], Lut3d)
    np.testing.assert_array_equal(ops[0].table.reshape(-1, 3), rows)
    assert_ops_match_ocio(ops, path)
    got = ocio_apply_file(path, grid_inputs_3d(ops[0]), OCIO.INTERP_TETRAHEDRAL)
    np.testing.assert_allclose(got, ops[0].table, atol=GRID_ATOL)


def test_spi3d_reading_stops_when_the_grid_is_full_as_ocio(tmp_path):
    rows = random_rows(8, seed=11)
    path = write(tmp_path / "trailing.spi3d", spi3d(rows, 2) + "0 0 0 9 8 7\nnot a row at all\n")
    (op,) = load_lut(path)
    np.testing.assert_array_equal(op.table.reshape(-1, 3), rows)
    assert_ops_match_ocio([op], path)


# --- malformed files ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header, line, needle",
    [
        ("Length 4\nComponents 1\n", 3, "missing the Version line"),
        ("Version 1\nComponents 1\n", 3, "missing the Length line"),
        ("Version 1\nLength 4\n", 3, "missing the Components line"),
        ("Version 2\nLength 4\nComponents 1\n", 1, "only Version 1 exists"),
        ("Version 1\nLength 1\nComponents 1\n", 2, r"Length must be 2\.\.1048576, got 1"),
        ("Version 1\nLength 4\nComponents 4\n", 3, "Components must be 1, 2 or 3, got 4"),
        ("Version 1\nLength 4.5\nComponents 1\n", 2, "Length: expected an integer, found '4.5'"),
        ("Version 1\nFrom 1 0\nLength 4\nComponents 1\n", 2, "From: maximum 0.0 must exceed minimum 1.0"),
        ("Version 1\nFrom 0\nLength 4\nComponents 1\n", 2, "From needs 2 numbers, found 1"),
        ("Version 1\nSize 4\nComponents 1\n", 2, "unknown keyword 'Size'"),
    ],
)
def test_spi1d_bad_header(tmp_path, header, line, needle):
    path = write(tmp_path / "bad.spi1d", spi1d(random_rows(4, 1), header))
    expect_error(load_lut, path, line, needle)


def test_spi1d_too_few_rows(tmp_path):
    text = spi1d(random_rows(4, 1), "Version 1\nLength 5\nComponents 1\n")
    expect_error(load_lut, write(tmp_path / "few.spi1d", text), 8, "expected 5 rows for Length 5, found 4")


def test_spi1d_too_many_rows(tmp_path):
    text = spi1d(random_rows(6, 1), "Version 1\nLength 5\nComponents 1\n")
    expect_error(load_lut, write(tmp_path / "many.spi1d", text), 10, "expected 5 rows for Length 5, found 6")


@pytest.mark.parametrize("row, needle", [("0.5 0.25", "expected 1 numbers per row, found 2"), ("nan", "NaN/Inf")])
def test_spi1d_bad_row(tmp_path, row, needle):
    lines = spi1d(random_rows(4, 1)).splitlines()
    lines[6] = row
    expect_error(load_lut, write(tmp_path / "row.spi1d", "\n".join(lines)), 7, needle)


def test_spi1d_without_braces(tmp_path):
    expect_error(load_lut, write(tmp_path / "nobrace.spi1d", "Version 1\nLength 2\nComponents 1\n"), None, "no '{'")
    text = "Version 1\nLength 2\nComponents 1\n{\n0.1\n0.2\n"
    expect_error(load_lut, write(tmp_path / "noclose.spi1d", text), 4, "no '}'")


@pytest.mark.parametrize(
    "text, line, needle",
    [
        ("LUT 1.0\n3 3\n2 2 2\n", 1, "expected 'SPILUT 1.0'"),
        ("SPILUT 1.0\n3 3\n2 2 3\n", 3, r"N N N' with N in 2\.\.256, got \[2, 2, 3\]"),
        ("SPILUT 1.0\n3 3\n257 257 257\n", 3, "got \\[257, 257, 257\\]"),
        ("SPILUT 1.0\n3 3\n", 2, "expected a '3 3' line and then the size"),
        ("SPILUT 1.0\n3 3\n2 2\n", 3, "LUT size needs 3 integers, found 2"),
    ],
)
def test_spi3d_bad_header(tmp_path, text, line, needle):
    expect_error(load_lut, write(tmp_path / "head.spi3d", text), line, needle)


@pytest.mark.parametrize(
    "row, needle",
    [
        ("0 2 1 0.1 0.2 0.3", r"index \(0, 2, 1\) is not an integer grid point in 0\.\.1"),
        ("0 0.5 1 0.1 0.2 0.3", r"index \(0, 0.5, 1\) is not an integer grid point"),
        ("0 1 1 0.1 0.2", "expected 6 numbers per row, found 5"),
        ("0 1 1 0.1 inf 0.3", "NaN/Inf"),
    ],
)
def test_spi3d_bad_row_names_its_line(tmp_path, row, needle):
    lines = spi3d(random_rows(8), 2).splitlines()
    lines[6] = row
    expect_error(load_lut, write(tmp_path / "row.spi3d", "\n".join(lines) + "\n"), 7, needle)


def test_spi3d_grid_point_given_twice(tmp_path):
    lines = spi3d(random_rows(8), 2).splitlines()
    lines[8] = "0 0 1 0.5 0.5 0.5"  # (1, 0, 1) replaced by a second (0, 0, 1)
    path = write(tmp_path / "twice.spi3d", "\n".join(lines) + "\n")
    expect_error(load_lut, path, 9, r"grid point \(0, 0, 1\) given twice \(first at line 5\)")


def test_spi3d_missing_grid_points(tmp_path):
    lines = spi3d(random_rows(8), 2).splitlines()
    del lines[5]  # grid point (0, 1, 0)
    path = write(tmp_path / "missing.spi3d", "\n".join(lines) + "\n")
    expect_error(load_lut, path, 10, r"1 of 8 grid points have no row, e.g. index \(0, 1, 0\)")
