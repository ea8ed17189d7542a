"""Sequence patterns and frame ranges read the way oiiotool, Nuke and RV users write them."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxi_cli.batch.frames import find_pattern, format_frames, frame_in_name, parse_frames
from oxi_cli.errors import UsageError


@pytest.mark.parametrize(
    ("text", "padding", "frame_1001", "frame_7"),
    [
        ("plate.####.exr", 4, "plate.1001.exr", "plate.0007.exr"),
        ("plate.#.exr", 4, "plate.1001.exr", "plate.0007.exr"),  # a lone # is four digits (oiiotool, RV)
        ("plate.##.exr", 2, "plate.1001.exr", "plate.07.exr"),
        ("plate.%04d.exr", 4, "plate.1001.exr", "plate.0007.exr"),
        ("plate.%d.exr", 1, "plate.1001.exr", "plate.7.exr"),
        ("plate.@@@.exr", 3, "plate.1001.exr", "plate.007.exr"),
        ("shots/sh010/plate_v2.#####.exr", 5, "shots/sh010/plate_v2.01001.exr", "shots/sh010/plate_v2.00007.exr"),
    ],
)
def test_pattern_padding_and_frame_paths(text: str, padding: int, frame_1001: str, frame_7: str):
    p = find_pattern(text)
    assert p is not None and p.padding == padding
    assert p.path(1001) == Path(frame_1001)
    assert p.path(7) == Path(frame_7)


def test_plain_names_and_folder_tokens_are_not_patterns():
    assert find_pattern("plate.1001.exr") is None
    assert find_pattern("shots#1/plate.exr") is None  # only the file name can hold the frame number


def test_two_frame_tokens_are_refused():
    with pytest.raises(UsageError, match="more than one"):
        find_pattern("plate.####.%04d.exr")


def test_scan_finds_only_names_the_pattern_would_write(tmp_path: Path):
    for name in ("plate.1001.exr", "plate.1002.exr", "plate.01003.exr", "plate.1004.png", "other.1005.exr",
                 "plate.10000.exr"):
        (tmp_path / name).write_bytes(b"x")
    p = find_pattern(str(tmp_path / "plate.####.exr"))
    assert p is not None
    assert list(p.scan()) == [1001, 1002, 10000]  # 01003 has the wrong padding; 10000 outgrows it


@pytest.mark.parametrize(
    ("text", "frames"),
    [
        ("1001-1005", [1001, 1002, 1003, 1004, 1005]),
        ("1001-1010x3", [1001, 1004, 1007, 1010]),
        ("1001,1005,1010-1012", [1001, 1005, 1010, 1011, 1012]),
        ("7", [7]),
        ("5-6,1-2,6", [1, 2, 5, 6]),
    ],
)
def test_frame_ranges(text: str, frames: list[int]):
    assert parse_frames(text) == frames


@pytest.mark.parametrize("text", ["1010-1001", "1001-1010x0", "a-b", "1001..1010", "", "1-99999999"])
def test_bad_frame_ranges_say_what_is_expected(text: str):
    with pytest.raises(UsageError, match="--frames"):
        parse_frames(text)


def test_missing_frames_are_reported_as_compact_ranges():
    assert format_frames([1010, 1004, 1011, 1012, 1020]) == "1004, 1010-1012, 1020"


def test_missing_frames_on_a_step_read_as_the_frames_syntax():
    assert format_frames(range(1002, 1101, 2)) == "1002-1100x2"
    assert format_frames([1, 3]) == "1, 3"  # two frames are not a stepped range
    assert format_frames([1, 3, 5, 6, 7]) == "1-5x2, 6-7"


def test_a_long_scatter_of_missing_frames_stays_one_short_line():
    text = format_frames([f * f for f in range(1, 200)])
    assert len(text) < 120 and text.endswith("more ranges")


def test_frame_number_of_a_plain_file_is_its_trailing_digits_after_a_separator():
    assert frame_in_name(Path("plate_v2.1001.exr")) == 1001
    assert frame_in_name(Path("render_0042.exr")) == 42
    assert frame_in_name(Path("1001.exr")) == 1001
    for name in ("hero.exr", "sh010.exr", "shot_v002.exr"):
        assert frame_in_name(Path(name)) is None
