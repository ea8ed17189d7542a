"""Ops as Python values: made from the steps the command uses, checked when made with the command's messages
(labelled by keyword), composed into chains that a recipe also loads into."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import oxi_cli as oxi
from oxi_cli.cli.run import split_run_args
from oxi_cli.errors import OxiError
from oxi_cli.ops.base import describe_op
from oxi_cli.recipe import STEPS, command_chain, compile_chain
from oxi_cli.recipe import load_recipe as load_recipe_specs
from tests.batch.test_recipe import CC, write_cube
from tests.cli.conftest import run_oxi


@pytest.fixture
def looks(tmp_path: Path) -> Path:
    (tmp_path / "grade.cc").write_text(CC)
    write_cube(tmp_path / "show.cube")
    return tmp_path


def _assert_same_ops(got: list[Any], want: list[Any]) -> None:
    """The same op values (a LUT's table compared as an array)."""
    assert [describe_op(op) for op in got] == [describe_op(op) for op in want]
    for a, b in zip(got, want, strict=True):
        if hasattr(a, "table"):
            np.testing.assert_array_equal(a.table, b.table)


def _message(make: Any) -> tuple[type, str]:
    with pytest.raises(OxiError) as caught:
        make()
    return type(caught.value), str(caught.value)


# (the Python call, the step and the same values given to its command, {command flag: keyword})
MISTAKES = [
    (lambda: oxi.Cdl(slope="abc"), "cdl", {"slope": "abc"}, {"--slope": "slope="}),
    (lambda: oxi.Cdl(slope=(1, 2)), "cdl", {"slope": (1, 2)}, {"--slope": "slope="}),
    (lambda: oxi.Cdl(power=0), "cdl", {"power": 0}, {}),
    (lambda: oxi.Cdl(), "cdl", {}, {"--cdl": "file=", "--slope": "slope=", "--offset": "offset=",
                                     "--power": "power=", "--sat": "sat="}),
    (lambda: oxi.Cdl(sat=1, style="film"), "cdl", {"sat": 1, "style": "film"}, {"--style": "style="}),
    (lambda: oxi.Resize("50"), "resize", {"size": "50"}, {"--size": "size="}),
    (lambda: oxi.Resize(width=100, scale=0.5), "resize", {"width": 100, "scale": 0.5},
     {"--size": "size=", "--width": "width=", "--height": "height=", "--scale": "scale="}),
    (lambda: oxi.Resize((1000, 1000), fit="bad"), "resize", {"size": "1000x1000", "fit": "bad"}, {"--fit": "fit="}),
    (lambda: oxi.Matrix([1, 2, 3]), "matrix", {"values": [1, 2, 3]}, {"--matrix": "values="}),
    (lambda: oxi.Matrix("1,2,3"), "matrix", {"values": "1,2,3"}, {"--matrix": "values="}),
    (lambda: oxi.Blur(), "blur", {}, {"--sigma": "sigma=", "--radius": "radius="}),
    (lambda: oxi.Blur(-1), "blur", {"sigma": -1}, {}),
    (lambda: oxi.ColorSpace("ACEScg", "no such space"), "colorspace", {"from": "ACEScg", "to": "no such space"}, {}),
    (lambda: oxi.Display("ACEScg", "sRGB - Display", "no view"), "display",
     {"from": "ACEScg", "display": "sRGB - Display", "view": "no view"}, {}),
]


@pytest.mark.parametrize(("make", "step", "values", "labels"), MISTAKES,
                         ids=[f"{m[1]}-{'-'.join(map(str, m[2].values())) or 'nothing'}" for m in MISTAKES])
def test_a_bad_value_is_refused_when_made_with_the_commands_message_naming_the_keyword(make, step, values, labels):
    kind, message = _message(make)
    want_kind, want = _message(lambda: command_chain(STEPS[step], values))
    for flag, keyword in labels.items():
        want = want.replace(flag, keyword)
    assert (kind, message) == (want_kind, want)


def test_the_command_prints_the_same_line_with_its_flag(tmp_path: Path):
    done = run_oxi("cdl", str(tmp_path / "in.exr"), str(tmp_path / "out.exr"), "--slope", "abc")
    _, message = _message(lambda: oxi.Cdl(slope="abc"))
    assert done.returncode == 2
    assert done.stderr == f"oxi: error: {message.replace('slope=', '--slope')}\n"


def test_a_file_op_reads_its_file_when_made_and_says_which_one_is_missing(looks: Path):
    op = oxi.Chain([oxi.Cdl(looks / "grade.cc", sat=1.2)])._compiled().ops_for(8, 8)[0]
    assert (op.slope, op.offset, op.sat) == ((1.1, 1.0, 0.9), (0.01, 0.0, -0.01), 1.2)
    with pytest.raises(oxi.InputError, match="nope.cube"):
        oxi.Lut3d(looks / "nope.cube")


def test_an_upscale_beyond_8x_asks_for_force_as_python_writes_it():
    big = oxi.Chain([oxi.Resize("1600%")])._compiled()
    with pytest.raises(oxi.UsageError, match=r"16x upscale; .* needs force=True$"):
        big.ops_for(10, 10)
    forced = oxi.Chain([oxi.Resize("1600%", force=True)])._compiled()
    assert forced.ops_for(10, 10)[0].out_size(10, 10) == (160, 160)


def test_ops_are_immutable_and_show_how_they_were_made():
    grade = oxi.Cdl(slope=(1.1, 1.0, 0.9), sat=0.9)
    assert repr(grade) == "Cdl(slope=(1.1, 1.0, 0.9), sat=0.9)"
    assert grade.params == {"slope": (1.1, 1.0, 0.9), "sat": 0.9}
    with pytest.raises(AttributeError, match="immutable"):
        grade.sat = 1.0  # type: ignore[misc]


def test_ops_compose_with_a_pipe_or_a_list_into_the_chain_oxi_run_compiles(looks: Path):
    grade, cube = oxi.Cdl(looks / "grade.cc", style="asc"), oxi.Lut3d(looks / "show.cube", interp="trilinear")
    proxy, soft = oxi.Resize("50%", filter="box"), oxi.Blur(radius=6)
    piped = grade | cube | (proxy | soft)
    listed = oxi.Chain([grade, oxi.Chain([cube, proxy]), soft])
    assert piped.ops == listed.ops == (grade, cube, proxy, soft)
    _, specs, _ = split_run_args(["--cdl:style=asc", str(looks / "grade.cc"), "--lut3d:interp=trilinear",
                                  str(looks / "show.cube"), "--resize:filter=box", "50%", "--blur", "radius=6"])
    want = compile_chain(specs).ops_for(640, 360)
    _assert_same_ops(piped._compiled().ops_for(640, 360), want)
    _assert_same_ops(listed._compiled().ops_for(640, 360), want)


def test_a_matrix_takes_rows_or_a_numpy_array():
    rows = [[0.6, 0.3, 0.1], [0.1, 0.8, 0.1], [0.0, 0.1, 0.9]]
    ops = [oxi.Chain([m])._compiled().ops_for(4, 4)[0] for m in (oxi.Matrix(rows), oxi.Matrix(np.array(rows)),
                                                                    oxi.Matrix("0.6,0.3,0.1,0.1,0.8,0.1,0,0.1,0.9"))]
    assert ops[0] == ops[1] == ops[2]


def test_a_recipe_loads_into_the_same_chain_type_with_its_settings(looks: Path):
    recipe = looks / "dailies.toml"
    recipe.write_text("""
description = "grade and proxy"
[output]
name = "{stem}_dailies{ext}"
[run]
jobs = 2

[[op]]
cdl = "grade.cc"
style = "asc"

[[op]]
resize = "1920x1080"
fit = "pad"
""")
    chain = oxi.load_recipe(recipe)
    assert isinstance(chain, oxi.Chain)
    assert [type(op) for op in chain] == [oxi.Cdl, oxi.Resize]
    assert chain.settings == {"name": "{stem}_dailies{ext}", "jobs": 2}
    assert chain.description == "grade and proxy"
    want = compile_chain(load_recipe_specs(recipe).specs).ops_for(4096, 2160)
    _assert_same_ops(chain._compiled().ops_for(4096, 2160), want)
    assert (chain | oxi.Blur(2)).settings == chain.settings


def test_a_recipe_mistake_keeps_the_recipes_wording(tmp_path: Path):
    recipe = tmp_path / "bad.toml"
    recipe.write_text('[[op]]\ncdl = { slope = "abc" }\n')
    with pytest.raises(oxi.UsageError, match=rf"^{recipe} op 1: cdl slope takes numbers"):
        oxi.load_recipe(recipe)


def test_a_chain_holds_ops_only():
    with pytest.raises(TypeError, match="not str"):
        oxi.Chain(["cdl"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="load_recipe"):
        oxi.apply(np.zeros((2, 2, 3), np.float32), "dailies.toml")  # type: ignore[arg-type]


def test_an_aces_2_view_is_an_op_users_name():
    view = oxi.Display("ACEScg", "sRGB - Display", "ACES 2.0 - SDR 100 nits (Rec.709)",
                       config="ocio://studio-config-latest")
    names = [type(op).__name__ for op in oxi.Chain([view])._compiled().ops_for(8, 8)]
    assert "Aces2Output" in names
