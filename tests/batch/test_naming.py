"""-o means a file, a folder or a sequence pattern; names follow --name; clashes are refused up front."""

from __future__ import annotations

from pathlib import Path

import pytest

from oxi_cli.batch.inputs import InputItem, Inputs, expand_inputs
from oxi_cli.batch.naming import output_path, resolve_target
from oxi_cli.batch.options import BatchOptions
from oxi_cli.batch.runner import plan_jobs
from oxi_cli.errors import UsageError
from oxi_cli.recipe import Chain


def one(path: str, frame: int | None = None) -> Inputs:
    return Inputs([InputItem(Path(path), frame)], batch=False)


def many(*paths: str) -> Inputs:
    return Inputs([InputItem(Path(p)) for p in paths], batch=True)


def test_one_input_and_an_image_name_is_the_output_file():
    target = resolve_target("graded.exr", one("plate.exr"), None)
    assert target.kind == "file" and output_path(target, one("plate.exr").items[0]) == Path("graded.exr")


def test_trailing_slash_or_existing_folder_means_a_folder(tmp_path: Path):
    assert resolve_target("out/", one("plate.exr"), None).kind == "folder"
    assert resolve_target(str(tmp_path), one("plate.exr"), None).kind == "folder"


def test_several_inputs_make_any_plain_path_a_folder_but_not_an_image_name():
    assert resolve_target("graded", many("a.exr", "b.exr"), None).kind == "folder"
    with pytest.raises(UsageError, match="names one file"):
        resolve_target("graded.exr", many("a.exr", "b.exr"), None)


def test_single_output_without_extension_asks_for_one():
    with pytest.raises(UsageError, match="no extension"):
        resolve_target("graded", one("a.exr"), None)


def test_name_template_fields():
    item = InputItem(Path("shots/sh010/plate_v2.1001.exr"), 1001)
    target = resolve_target("out", many("x"), "{parent}_{base}_graded.{frame:05d}{ext}")
    assert output_path(target, item) == Path("out/sh010_plate_v2_graded.01001.exr")
    target = resolve_target("out", many("x"), "{stem}.png")
    assert output_path(target, item) == Path("out/plate_v2.1001.png")


def test_unknown_template_field_is_refused_before_any_work():
    with pytest.raises(UsageError, match="{colour}"):
        resolve_target("out", many("x"), "{stem}_{colour}{ext}")


def test_sequence_output_takes_each_input_frame():
    target = resolve_target("out/graded.%05d.exr", many("x"), None)
    assert output_path(target, InputItem(Path("plate.1001.exr"), 1001)) == Path("out/graded.01001.exr")
    with pytest.raises(UsageError, match="no frame number"):
        output_path(target, InputItem(Path("hero.exr")))


def test_recursive_inputs_mirror_their_folders(tmp_path: Path):
    (tmp_path / "in" / "sh010").mkdir(parents=True)
    (tmp_path / "in" / "sh010" / "a.exr").write_bytes(b"x")
    inputs = expand_inputs([str(tmp_path / "in")], recursive=True)
    target = resolve_target(str(tmp_path / "out"), inputs, None)
    assert output_path(target, inputs.items[0]) == tmp_path / "out" / "sh010" / "a.exr"


def test_two_inputs_landing_on_one_output_are_refused(tmp_path: Path):
    for sub in ("x", "y"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "a.exr").write_bytes(b"x")
    inputs = expand_inputs([str(tmp_path / "x" / "a.exr"), str(tmp_path / "y" / "a.exr")])
    target = resolve_target(str(tmp_path / "out"), inputs, None)
    with pytest.raises(UsageError, match="would both be written"):
        plan_jobs(inputs, target, Chain(), BatchOptions())


def test_outputs_onto_their_inputs_need_in_place(tmp_path: Path):
    (tmp_path / "a.exr").write_bytes(b"x")
    (tmp_path / "b.exr").write_bytes(b"x")
    inputs = expand_inputs([str(tmp_path)])
    target = resolve_target(str(tmp_path), inputs, None)
    with pytest.raises(UsageError, match="--in-place"):
        plan_jobs(inputs, target, Chain(), BatchOptions())
    assert len(plan_jobs(inputs, target, Chain(), BatchOptions(in_place=True))) == 2


def test_a_recipe_name_template_names_folder_outputs_only():
    item = InputItem(Path("plate.1001.exr"), 1001)
    assert output_path(resolve_target("out/", many("x"), None, "{stem}_d{ext}"), item) == Path("out/plate.1001_d.exr")
    assert output_path(resolve_target("out/", many("x"), "{stem}_cli{ext}", "{stem}_d{ext}"), item) == Path(
        "out/plate.1001_cli.exr")
    assert output_path(resolve_target("out/p.####.exr", many("x"), None, "{stem}_d{ext}"), item) == Path(
        "out/p.1001.exr")
    assert resolve_target("one.exr", one("a.exr"), None, "{stem}_d{ext}").kind == "file"
