"""Op chains from flags and TOML recipes: order kept, files loaded once, every mistake named."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from oxi_cli.cli.run import split_run_args
from oxi_cli.errors import FormatError, InputError, OxiError, UsageError
from oxi_cli.ops import Blur, Cdl, Lut3d, Matrix, Resize
from oxi_cli.ops.blur import WindowBlur
from oxi_cli.recipe import compile_chain, load_recipe

CC = """<ColorCorrection id="sh010">
  <SOPNode><Slope>1.1 1.0 0.9</Slope><Offset>0.01 0 -0.01</Offset><Power>1.2 1 0.8</Power></SOPNode>
  <SatNode><Saturation>0.9</Saturation></SatNode>
</ColorCorrection>
"""


def write_cube(path: Path, n: int = 3) -> Path:
    g = np.linspace(0.0, 1.0, n)
    b, gg, r = np.meshgrid(g, g, g, indexing="ij")
    rows = np.stack([r.ravel() ** 2, gg.ravel(), b.ravel() * 0.5], axis=1)
    path.write_text(f"LUT_3D_SIZE {n}\n" + "\n".join(" ".join(f"{v:.6f}" for v in row) for row in rows) + "\n")
    return path


@pytest.fixture
def looks(tmp_path: Path) -> Path:
    (tmp_path / "grade.cc").write_text(CC)
    write_cube(tmp_path / "show.cube")
    return tmp_path


def chain_from(args: list[str]):
    paths, specs, settings = split_run_args(args)
    return paths, compile_chain(specs), settings


def test_flags_keep_their_order_and_inputs_between_them(looks: Path):
    paths, chain, _ = chain_from([
        "a.exr", "--cdl", str(looks / "grade.cc"), "b.exr", "--resize", "50%", "--lut3d:interp=trilinear",
        str(looks / "show.cube"), "--matrix", "-1,0,0,0,1,0,0,0,1", "--blur=2",
    ])
    assert paths == ["a.exr", "b.exr"]
    ops = chain.ops_for(200, 100)
    assert [type(op) for op in ops] == [Cdl, Resize, Lut3d, Matrix, Blur]
    assert ops[0].slope == (1.1, 1.0, 0.9) and ops[0].sat == 0.9
    assert (ops[1].width, ops[1].height) == (100, 50)
    assert ops[2].interp == "trilinear"
    assert ops[3].m[0] == -1.0
    assert ops[4].sigma == 2.0


def test_sizes_flow_through_successive_resizes():
    _, chain, _ = chain_from(["--resize", "1920x0", "--resize", "50%", "--resize:filter=box:fit=stretch", "100x100"])
    ops = chain.ops_for(4096, 2160)
    # halves round up, as oiiotool's: 2160 * 1920 / 4096 = 1012.5 -> 1013, then 506.5 -> 507
    assert [(op.width, op.height) for op in ops] == [(1920, 1013), (960, 507), (100, 100)]
    assert ops[2].filter == "box"


def test_inline_cdl_values_and_parameters(looks: Path):
    _, chain, _ = chain_from(["--cdl", "slope=1.2,1,0.8 sat=0.5", "--cdl:style=asc:sat=1.3", str(looks / "grade.cc")])
    a, b = chain.ops_for(8, 8)
    assert a.slope == (1.2, 1.0, 0.8) and a.sat == 0.5 and a.power == (1.0, 1.0, 1.0)
    assert b.style == "asc" and b.sat == 1.3 and b.power == (1.2, 1.0, 0.8)  # explicit sat overrides the file's


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--cdl:colour=1", "x.cc"], "no parameter 'colour'"),
        (["--resize", "big"], "--resize takes WxH"),
        (["--matrix", "1,2"], "9 or 12 or 16"),
        (["--blur"], "--blur needs a value"),
        (["--sharpen", "2"], "unknown option --sharpen"),
        (["--lut3d", "missing.cube"], "--lut3d: LUT file not found"),
        (["--cdl", "slope=1,2"], "slope"),
    ],
)
def test_bad_flags_name_what_is_wrong(args: list[str], words: str):
    with pytest.raises(OxiError, match=words):
        chain_from(args)


def test_recipe_ops_settings_and_relative_files(looks: Path):
    recipe = looks / "dailies.toml"
    recipe.write_text("""
description = "grade, show LUT, proxy"
[output]
name = "{stem}_dailies{ext}"
out_type = "half"
[run]
jobs = 2
memory_budget = "2G"

[[op]]
cdl = "grade.cc"
style = "asc"

[[op]]
lut3d = "show.cube"

[[op]]
resize = "1920x1080"
filter = "mitchell"

[[op]]
matrix = [1, 0, 0, 0, 1, 0, 0, 0, 1.5]

[[op]]
blur = { radius = 6 }
""")
    r = load_recipe(recipe)
    assert r.description == "grade, show LUT, proxy"
    assert r.settings == {"name": "{stem}_dailies{ext}", "out_type": "half", "jobs": 2, "memory_budget": "2G"}
    ops = compile_chain(r.specs).ops_for(4096, 2160)
    # the fitted picture's data window (0,33)-(1919,1045) lies inside the 1920x1080 box: the blur reads black
    # around it (a WindowBlur, its data window grown by the reach)
    assert [type(op) for op in ops] == [Cdl, Lut3d, Resize, Matrix, WindowBlur]
    assert ops[0].style == "asc" and ops[2].filter == "mitchell" and ops[3].m[10] == 1.5 and ops[4].sigma == 2.0
    assert (ops[4].width, ops[4].height) == (1920, 1025)


def test_recipe_unpremult_setting_reads_as_a_bool_and_wraps_each_colour_run(looks: Path):
    recipe = looks / "cg.toml"
    recipe.write_text('[run]\nunpremult = true\n[[op]]\ncdl = "grade.cc"\n[[op]]\nblur = 1\n'
                      '[[op]]\nlut3d = "show.cube"\n')
    r = load_recipe(recipe)
    assert r.settings == {"unpremult": True}
    ops = compile_chain(r.specs, unpremult=r.settings["unpremult"]).ops_for(64, 32)
    assert [op.name for op in ops] == ["unpremult", "cdl", "repremult", "blur", "unpremult", "lut3d", "repremult"]
    assert [op.name for op in compile_chain(r.specs).ops_for(64, 32)] == ["cdl", "blur", "lut3d"]


def test_recipe_expands_where_it_appears_among_flags(looks: Path):
    (looks / "r.toml").write_text('[[op]]\nlut3d = "show.cube"\n')
    _, chain, _ = chain_from(["--blur", "1", "--recipe", str(looks / "r.toml"), "--resize", "50%"])
    assert [type(op) for op in chain.ops_for(10, 10)] == [Blur, Lut3d, Resize]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[[op]]\ncdl = \n", "not valid TOML"),
        ("[[op]]\ncdl = 'a.cc'\nlut3d = 'b.cube'\n", "exactly one of"),
        ("[outptu]\nname = 'x'\n", "unknown key 'outptu'"),
        ("[output]\njobs = 2\n", "[output] has no setting 'jobs'"),
        ("op = 3\n", "[[op]] tables"),
    ],
)
def test_recipe_mistakes_name_the_file(tmp_path: Path, text: str, words: str):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(FormatError) as e:
        load_recipe(path)
    assert str(path) in str(e.value) and words in str(e.value)


def test_recipe_op_values_are_checked_with_the_op_number(tmp_path: Path):
    path = tmp_path / "r.toml"
    path.write_text("[[op]]\nblur = 1\n[[op]]\nresize = 'huge'\n")
    with pytest.raises(UsageError, match=r"r\.toml op 2"):
        compile_chain(load_recipe(path).specs)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('[run]\nthreads = "many"\n', ("[run] threads", "an integer")),
        ('[run]\njobs = "abc"\n', ("[run] jobs", "an integer")),
        ("[run]\nbackend = 3\n", ("[run] backend", "a string")),
        ('[output]\ncompression = ["zip"]\n', ("[output] compression", "a string")),
        ("[run]\nthreads = 100000\n", ("[run] threads", "1..")),
        ('[run]\nunpremult = "yes"\n', ("[run] unpremult", "true or false")),
        ("[run]\nunpremult = 1\n", ("[run] unpremult", "true or false")),
    ],
)
def test_a_setting_of_the_wrong_type_names_the_key_and_what_it_takes(tmp_path: Path, body: str, words):
    path = tmp_path / "r.toml"
    path.write_text(body)
    with pytest.raises(FormatError) as err:
        load_recipe(path)
    assert err.value.exit_code == 2 and all(w in str(err.value) for w in words)


@pytest.mark.parametrize("body", ["a = " + "[" * 5000 + "]" * 5000, "x = " + "{a = " * 3000 + "1" + "}" * 3000])
def test_deeply_nested_toml_is_a_format_error(tmp_path: Path, body: str):
    path = tmp_path / "deep.toml"
    path.write_text(body)
    with pytest.raises(FormatError, match="nested too deeply"):
        load_recipe(path)


def test_a_recipe_path_that_is_a_fifo_or_a_device_is_refused_without_reading(tmp_path: Path):
    fifo = tmp_path / "r.toml"
    os.mkfifo(fifo)  # no writer: opening it would block forever
    for path in (fifo, Path("/dev/zero")):
        t0 = time.perf_counter()
        with pytest.raises(InputError, match="not a regular file"):
            load_recipe(path)
        assert time.perf_counter() - t0 < 1.0


def test_a_huge_recipe_is_refused_before_it_is_read(tmp_path: Path):
    path = tmp_path / "big.toml"
    with open(path, "wb") as f:
        f.truncate(64 << 20)
    with pytest.raises(InputError, match="over 4 MiB are refused"):
        load_recipe(path)


def test_a_step_takes_its_commands_parameters_in_every_form(tmp_path: Path):
    """`oxi resize --width 64 --filter box`, as run flags (pairs, or modifiers with an empty value) and as a
    recipe table: the one declaration in ops/resize.py serves them all."""
    recipe = tmp_path / "r.toml"
    recipe.write_text('[[op]]\nresize = {width = 64, filter = "box"}\n')
    forms = [["--resize", "width=64 filter=box"], ["--resize:filter=box:width=64", ""], ["--recipe", str(recipe)]]
    for args in forms:
        _, chain, _ = chain_from(args)
        (resize,) = chain.ops_for(640, 320)
        assert (resize.width, resize.height, resize.filter) == (64, 32, "box"), args


def test_a_step_given_its_value_twice_says_which_ways():
    with pytest.raises(OxiError, match="exactly one of --resize, --resize:width"):
        chain_from(["--resize:width=64", "50%"])
