"""`oxi run`: a chain gives what the single-op commands give one after another, in the order written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.batch.helpers import listing, records
from tests.batch.test_recipe import CC, write_cube
from tests.cli.conftest import hdr_rgba, read_exr, run_oxi, write_exr


def planes(path: Path) -> dict[str, np.ndarray]:
    return {k: v.astype(np.float32) for k, v in read_exr(path)[1].items()}


def assert_same(a: Path, b: Path) -> None:
    pa, pb = planes(a), planes(b)
    assert pa.keys() == pb.keys()
    for name in pa:
        np.testing.assert_allclose(pa[name], pb[name], rtol=1e-6, atol=1e-6, equal_nan=True, err_msg=name)


@pytest.fixture
def hdr_float(tmp_path: Path) -> Path:
    """Float RGBA + AOVs with HDR values, negatives, NaN and +/-Inf, so rounding hides nothing."""
    data = hdr_rgba(23, 31, seed=7) * 3.0
    rng = np.random.default_rng(3)
    for value in (np.nan, np.inf, -np.inf):
        idx = rng.integers(0, data.shape[0], 6), rng.integers(0, data.shape[1], 6), rng.integers(0, 3, 6)
        data[idx] = value
    return write_exr(tmp_path / "hdr.exr", data, half=False)


@pytest.fixture
def looks(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "grade.cc").write_text(CC)
    return tmp_path / "grade.cc", write_cube(tmp_path / "show.cube", 5)


MATRIX = "0.9,0.2,-0.1, 0.05,1.1,0, -0.02,0.1,0.95"


def test_colour_chain_equals_op_by_op_commands(hdr_float: Path, looks: tuple[Path, Path], tmp_path: Path):
    cc, cube = looks
    chained = tmp_path / "chained.exr"
    res = run_oxi("run", str(hdr_float), str(chained), "--cdl", str(cc), "--lut3d", str(cube), "--matrix", MATRIX,
                  "--cdl", "slope=0.8,1,1.2 power=1.1")
    assert res.returncode == 0, res.stderr
    a, b, c, d = (tmp_path / f"step{i}.exr" for i in range(4))
    for cmd in (["cdl", str(hdr_float), str(a), "--cdl", str(cc)],
                ["lut3d", str(a), str(b), "--lut", str(cube)],
                ["matrix", str(b), str(c), "--matrix", MATRIX],
                ["cdl", str(c), str(d), "--slope", "0.8,1,1.2", "--power", "1.1"]):
        step = run_oxi(*cmd)
        assert step.returncode == 0, step.stderr
    assert_same(chained, d)


def test_order_is_the_order_written_with_a_resize_between_colour_ops(hdr_float: Path, tmp_path: Path):
    first = tmp_path / "cdl_then_resize.exr"
    res = run_oxi("run", str(hdr_float), str(first), "--cdl", "power=2.2", "--resize:filter=mitchell", "15x0",
                  "--json")
    assert res.returncode == 0, res.stderr
    assert [op["op"] for op in records(res.stdout)[0]["ops"]] == ["cdl", "resize"]
    a, b = tmp_path / "a.exr", tmp_path / "b.exr"
    assert run_oxi("cdl", str(hdr_float), str(a), "--power", "2.2").returncode == 0
    assert run_oxi("resize", str(a), str(b), "--width", "15", "--filter", "mitchell").returncode == 0
    assert_same(first, b)
    swapped = tmp_path / "resize_then_cdl.exr"
    assert run_oxi("run", str(hdr_float), str(swapped), "--resize:filter=mitchell", "15x0", "--cdl",
                   "power=2.2").returncode == 0
    assert not np.allclose(planes(first)["R"], planes(swapped)["R"], equal_nan=True)


def test_unpremult_wraps_each_colour_run_and_leaves_the_resize_between_on_premultiplied_pixels(
    hdr_float: Path, looks: tuple[Path, Path], tmp_path: Path
):
    cc, cube = looks
    chained = tmp_path / "chained.exr"
    res = run_oxi("run", str(hdr_float), str(chained), "--cdl", str(cc), "--resize:filter=lanczos3", "17x0",
                  "--lut3d", str(cube), "--unpremult", "--json")
    assert res.returncode == 0, res.stderr
    assert [op["op"] for op in records(res.stdout)[0]["ops"]] == [
        "unpremult", "cdl", "repremult", "resize", "unpremult", "lut3d", "repremult"]
    a, b, c = (tmp_path / f"step{i}.exr" for i in range(3))
    for cmd in (["cdl", str(hdr_float), str(a), "--cdl", str(cc), "--unpremult"],
                ["resize", str(a), str(b), "--width", "17", "--filter", "lanczos3"],
                ["lut3d", str(b), str(c), "--lut", str(cube), "--unpremult"]):
        step = run_oxi(*cmd)
        assert step.returncode == 0, step.stderr
    assert_same(chained, c)
    whole = tmp_path / "whole.exr"  # the resize unpremultiplied too would be another picture
    assert run_oxi("run", str(hdr_float), str(whole), "--cdl", str(cc), "--resize:filter=lanczos3", "17x0",
                   "--lut3d", str(cube)).returncode == 0
    assert not np.allclose(planes(chained)["R"], planes(whole)["R"], equal_nan=True)


def test_recipe_unpremult_setting_applies_and_yields_to_the_flag(looks: tuple[Path, Path], tmp_path: Path):
    cc, _ = looks
    src = write_exr(tmp_path / "cg.exr", hdr_rgba(16, 20, seed=4), half=False)
    recipe = tmp_path / "cg.toml"
    recipe.write_text(f'[run]\nunpremult = true\n[[op]]\ncdl = "{cc.name}"\n')
    outs = {name: tmp_path / f"{name}.exr" for name in ("recipe", "flag", "recipe_off", "plain")}
    for name, args in {"recipe": ["--recipe", str(recipe)], "flag": ["--cdl", str(cc), "--unpremult"],
                       "recipe_off": ["--recipe", str(recipe), "--no-unpremult"], "plain": ["--cdl", str(cc)]}.items():
        res = run_oxi("run", str(src), str(outs[name]), *args)
        assert res.returncode == 0, res.stderr
    np.testing.assert_array_equal(planes(outs["recipe"])["R"], planes(outs["flag"])["R"])
    np.testing.assert_array_equal(planes(outs["recipe_off"])["R"], planes(outs["plain"])["R"])
    assert not np.array_equal(planes(outs["recipe"])["R"], planes(outs["plain"])["R"])


def test_recipe_runs_the_same_chain_and_its_settings_yield_to_flags(looks: tuple[Path, Path], tmp_path: Path):
    cc, cube = looks
    shots = tmp_path / "shots"
    shots.mkdir()
    for i in range(2):
        write_exr(shots / f"sh0{i}0.exr", hdr_rgba(16, 20, seed=i), half=False)
    recipe = tmp_path / "dailies.toml"
    recipe.write_text(f"""
[output]
name = "{{stem}}_dailies{{ext}}"
out_type = "half"
[[op]]
cdl = "{cc.name}"
[[op]]
lut3d = "{cube.name}"
interp = "trilinear"
[[op]]
resize = "10x8"
""")
    res = run_oxi("run", "--recipe", str(recipe), str(shots), "-o", str(tmp_path / "out"), "--json")
    assert res.returncode == 0, res.stderr
    assert listing(tmp_path / "out") == ["sh000_dailies.exr", "sh010_dailies.exr"]
    out = tmp_path / "out" / "sh010_dailies.exr"
    assert all(p.dtype == np.float16 for p in read_exr(out)[1].values())
    flags = tmp_path / "flags.exr"
    assert run_oxi("run", str(shots / "sh010.exr"), str(flags), "--cdl", str(cc), "--lut3d:interp=trilinear",
                   str(cube), "--resize", "10x8", "--out-type", "half").returncode == 0
    np.testing.assert_array_equal(read_exr(out)[1]["R"], read_exr(flags)[1]["R"])
    # A flag on the command line wins over the recipe's setting.
    res = run_oxi("run", "--recipe", str(recipe), str(shots), "-o", str(tmp_path / "f"), "--out-type", "float")
    assert res.returncode == 0, res.stderr
    assert read_exr(tmp_path / "f" / "sh000_dailies.exr")[1]["R"].dtype == np.float32


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--sharpen", "2"], "--sharpen"),
        (["--resize", "wide"], "--resize"),
        (["--recipe", "nope.toml"], "nope.toml"),
    ],
)
def test_run_mistakes_are_one_line_usage_errors(hdr_float: Path, tmp_path: Path, args: list[str], words: str):
    res = run_oxi("run", str(hdr_float), str(tmp_path / "o.exr"), *args)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in res.stderr
    assert not (tmp_path / "o.exr").exists()


def test_run_without_ops_re_encodes(hdr_float: Path, tmp_path: Path):
    out = tmp_path / "half.exr"
    res = run_oxi("run", str(hdr_float), str(out), "--out-type", "half", "--compression", "piz")
    assert res.returncode == 0, res.stderr
    header, p = read_exr(out)
    assert "PIZ" in str(header["compression"]) and p["R"].dtype == np.float16
