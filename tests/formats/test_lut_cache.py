"""Big LUT files come back from oxi's cache exactly as parsed, and only when the file, the code and the folder allow."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from oxi_cli.formats import lut_cache
from oxi_cli.formats.cube import parse_cube
from oxi_cli.formats.registry import load_lut
from oxi_cli.ops import Lut1d, Lut3d
from tests.formats.files import expect_error, random_rows, rows_text, write

SIZE = 45  # 91125 rows, about 2.4 MB: over lut_cache.MIN_BYTES


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(lut_cache.OPT_OUT, raising=False)
    return tmp_path / "cache" / "oxi" / "luts"


@pytest.fixture(scope="module")
def big_text() -> str:
    rows = random_rows(SIZE**3, seed=3) * 1.5 - 0.25  # HDR and negative entries, not a ramp
    shaper = random_rows(4096, seed=4)
    text = (f"TITLE \"big\"\nLUT_1D_SIZE 4096\nLUT_1D_INPUT_RANGE -0.125 2.5\nLUT_3D_SIZE {SIZE}\n"
            f"LUT_3D_INPUT_RANGE 0.0 1.5\n" + rows_text(shaper) + rows_text(rows))
    assert len(text) > lut_cache.MIN_BYTES
    return text


def counted(data: bytes, path: Path) -> tuple[list, list[int]]:
    calls = [0]

    def parse() -> list:
        calls[0] += 1
        return parse_cube(data, path)

    return lut_cache.load_or_parse(data, "cube", "tetrahedral", parse), calls


def assert_same_ops(got: list, want: list) -> None:
    assert [type(op) for op in got] == [type(op) for op in want]
    for a, b in zip(got, want, strict=True):
        assert a.table.dtype == b.table.dtype and a.table.shape == b.table.shape
        assert np.array_equal(a.table.view(np.uint32), b.table.view(np.uint32))  # bit for bit
        assert (a.domain_min, a.domain_max) == (b.domain_min, b.domain_max)
    assert [op.interp for op in got if isinstance(op, Lut3d)] == [op.interp for op in want if isinstance(op, Lut3d)]


def test_a_big_lut_is_parsed_once_then_served_bit_for_bit_from_the_cache(tmp_path, big_text, own_cache):
    path = write(tmp_path / "big.cube", big_text)
    data = path.read_bytes()
    first, calls = counted(data, path)
    assert calls == [1] and [type(op) for op in first] == [Lut1d, Lut3d]
    again, calls = counted(data, path)
    assert calls == [0]
    assert_same_ops(again, first)
    assert len(list(own_cache.glob("*.npz"))) == 1
    assert own_cache.stat().st_mode & 0o077 == 0


def test_load_lut_uses_the_cache_and_keeps_the_interpolation_apart(tmp_path, big_text, own_cache):
    path = write(tmp_path / "big.cube", big_text)
    tetra = load_lut(path)
    tri = load_lut(path, "trilinear")
    assert tetra[1].interp == "tetrahedral" and tri[1].interp == "trilinear"
    assert len(list(own_cache.glob("*.npz"))) == 2
    assert_same_ops(load_lut(path), tetra)
    assert_same_ops(load_lut(path, "trilinear"), tri)


def test_an_edited_file_is_parsed_again(tmp_path, big_text):
    path = write(tmp_path / "big.cube", big_text)
    before, _ = counted(path.read_bytes(), path)
    edited = big_text.replace("LUT_3D_INPUT_RANGE 0.0 1.5", "LUT_3D_INPUT_RANGE 0.0 2.5")
    path = write(tmp_path / "big.cube", edited)
    after, calls = counted(path.read_bytes(), path)
    assert calls == [1]
    assert after[1].domain_max == (2.5, 2.5, 2.5) and before[1].domain_max == (1.5, 1.5, 1.5)


def test_a_damaged_entry_is_a_miss_and_is_written_again(tmp_path, big_text, own_cache):
    path = write(tmp_path / "big.cube", big_text)
    data = path.read_bytes()
    first, _ = counted(data, path)
    entry = next(own_cache.glob("*.npz"))
    entry.write_bytes(entry.read_bytes()[:1000])
    again, calls = counted(data, path)
    assert calls == [1]
    assert_same_ops(again, first)
    assert_same_ops(counted(data, path)[0], first)


def test_a_folder_other_users_may_write_into_is_not_used(tmp_path, big_text, own_cache):
    own_cache.mkdir(parents=True)
    os.chmod(own_cache, 0o777)
    path = write(tmp_path / "big.cube", big_text)
    data = path.read_bytes()
    for _ in range(2):
        _, calls = counted(data, path)
        assert calls == [1]
    assert not list(own_cache.iterdir())


def test_the_cache_can_be_turned_off(tmp_path, big_text, own_cache, monkeypatch):
    monkeypatch.setenv(lut_cache.OPT_OUT, "0")
    path = write(tmp_path / "big.cube", big_text)
    for _ in range(2):
        _, calls = counted(path.read_bytes(), path)
        assert calls == [1]
    assert not own_cache.exists()


def test_small_files_and_bad_files_are_never_cached(tmp_path, big_text, own_cache):
    small = write(tmp_path / "small.cube", "LUT_3D_SIZE 2\n" + rows_text(random_rows(8)))
    load_lut(small)
    bad = write(tmp_path / "bad.cube", big_text.replace("\n0.", "\n0.x", 1))
    for _ in range(2):
        expect_error(load_lut, bad, 10, "expected 3 numbers per row")
    assert not own_cache.exists() or not list(own_cache.glob("*.npz"))


def test_only_the_most_recently_used_entries_are_kept(tmp_path, big_text, own_cache, monkeypatch):
    monkeypatch.setattr(lut_cache, "MAX_ENTRIES", 2)
    paths = [write(tmp_path / f"lut{i}.cube", big_text.replace("big", f"big {i}")) for i in range(3)]
    for i, p in enumerate(paths):
        before = set(own_cache.glob("*.npz"))
        counted(p.read_bytes(), p)
        for entry in set(own_cache.glob("*.npz")) - before:
            os.utime(entry, (1000 + i, 1000 + i))  # the order they were used in, whatever the clock's grain
    assert len(list(own_cache.glob("*.npz"))) == 2
    assert counted(paths[2].read_bytes(), paths[2])[1] == [0]
    assert counted(paths[0].read_bytes(), paths[0])[1] == [1]
