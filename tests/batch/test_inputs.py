"""Folders, globs, sequences and plain files expand to the files to process, in the order people expect."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxi_cli.batch.inputs import expand_inputs
from oxi_cli.errors import UsageError


def touch(*paths: Path) -> None:
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"not decoded here")


def test_folder_lists_images_in_natural_order_skipping_hidden_and_other_files(tmp_path: Path):
    touch(tmp_path / "s10.exr", tmp_path / "s2.exr", tmp_path / "s1.png", tmp_path / ".s3.oxi-tmp-x.exr",
          tmp_path / "notes.txt", tmp_path / "sub" / "deep.exr")
    got = expand_inputs([str(tmp_path)])
    assert got.batch
    assert [i.path.name for i in got.items] == ["s1.png", "s2.exr", "s10.exr"]


def test_recursive_folder_keeps_each_file_relative_folder(tmp_path: Path):
    touch(tmp_path / "a.exr", tmp_path / "sh010" / "b.exr", tmp_path / "sh020" / "x" / "c.exr")
    got = expand_inputs([str(tmp_path)], recursive=True)
    assert {i.path.name: i.rel_dir for i in got.items} == {
        "a.exr": Path("."),
        "b.exr": Path("sh010"),
        "c.exr": Path("sh020/x"),
    }


def test_glob_matches_in_natural_order(tmp_path: Path):
    touch(tmp_path / "p.10.exr", tmp_path / "p.9.exr", tmp_path / "q.1.exr")
    got = expand_inputs([str(tmp_path / "p.*.exr")])
    assert [i.path.name for i in got.items] == ["p.9.exr", "p.10.exr"]
    assert [i.frame for i in got.items] == [9, 10]


def test_a_gap_in_the_sequence_on_disk_is_required_like_frames_asked_for(tmp_path: Path):
    touch(*(tmp_path / f"plate.{f}.exr" for f in (1001, 1002, 1005)))
    got = expand_inputs([str(tmp_path / "plate.####.exr")])
    assert [(i.frame, i.missing, i.required) for i in got.items] == [
        (1001, False, False), (1002, False, False), (1003, True, True), (1004, True, True), (1005, False, False)
    ]
    assert got.notes == []  # said once, by the batch's summary


def test_frames_asked_for_but_absent_are_required(tmp_path: Path):
    touch(*(tmp_path / f"plate.{f:04d}.exr" for f in (1, 3, 5)))
    got = expand_inputs([str(tmp_path / "plate.%04d.exr")], frames="1-5x2,4")
    assert [(i.frame, i.missing, i.required) for i in got.items] == [
        (1, False, False), (3, False, False), (4, True, True), (5, False, False)
    ]


def test_frames_without_a_sequence_input_is_a_usage_error(tmp_path: Path):
    touch(tmp_path / "a.exr")
    with pytest.raises(UsageError, match="--frames needs a sequence"):
        expand_inputs([str(tmp_path / "a.exr")], frames="1-2")


def test_empty_folder_glob_and_sequence_are_usage_errors(tmp_path: Path):
    for arg in (str(tmp_path), str(tmp_path / "*.exr"), str(tmp_path / "plate.####.exr")):
        with pytest.raises(UsageError):
            expand_inputs([arg])


def test_plain_missing_file_is_kept_for_its_own_error_later(tmp_path: Path):
    got = expand_inputs([str(tmp_path / "nope.exr")])
    assert not got.batch and [i.path.name for i in got.items] == ["nope.exr"]


def test_literal_file_with_hash_in_its_name_wins_over_the_pattern_reading(tmp_path: Path):
    touch(tmp_path / "take#1.exr")
    got = expand_inputs([str(tmp_path / "take#1.exr")])
    assert not got.batch and got.items[0].path.name == "take#1.exr"


def test_same_file_named_twice_is_processed_once(tmp_path: Path):
    touch(tmp_path / "a.exr", tmp_path / "b.exr")
    got = expand_inputs([str(tmp_path / "a.exr"), str(tmp_path)])
    assert [i.path.name for i in got.items] == ["a.exr", "b.exr"]
