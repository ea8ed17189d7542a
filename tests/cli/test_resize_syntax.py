"""One size syntax everywhere (oxi resize, oxi run --resize, recipes): WxH, Wx0 / 0xH, N%; a bare number is
refused naming both readings; WxH fits inside the box by default; big upscales need --force; --plan shows
the output size."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import hdr_rgba, read_exr, run_oxi, write_exr
from tests.cli.test_cli_errors import assert_one_line_error


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    return write_exr(tmp_path / "wide.exr", hdr_rgba(20, 40), aovs=False)


def size_of(path: Path) -> tuple[int, int]:
    _, planes = read_exr(path)
    h, w = next(iter(planes.values())).shape[:2]
    return w, h


@pytest.mark.parametrize(("value", "readings"), [("50", ("50%", "50x0")), ("1920", ("1920x0", "1920%")),
                                                  ("0.5", ("50%",))])
def test_a_bare_number_is_refused_and_the_error_offers_each_reading(wide: Path, tmp_path: Path, value, readings):
    out = tmp_path / "o.exr"
    assert_one_line_error(run_oxi("run", str(wide), str(out), "--resize", value), 2, "ambiguous", *readings)
    assert not out.exists()


def test_scale_is_written_the_same_in_resize_run_and_recipes(wide: Path, tmp_path: Path):
    recipe = tmp_path / "half.toml"
    recipe.write_text('[[op]]\nresize = "50%"\n')
    runs = {
        "resize_pct": ("resize", "--scale", "50%"),
        "resize_factor": ("resize", "--scale", "0.5"),
        "resize_size": ("resize", "--size", "50%"),
        "run": ("run", "--resize", "50%"),
        "recipe": ("run", "--recipe", str(recipe)),
    }
    for name, (cmd, *args) in runs.items():
        out = tmp_path / f"{name}.exr"
        res = run_oxi(cmd, str(wide), str(out), *args)
        assert res.returncode == 0, (name, res.stderr)
        assert size_of(out) == (20, 10), name


def test_a_recipe_number_is_as_ambiguous_as_a_flag(wide: Path, tmp_path: Path):
    recipe = tmp_path / "r.toml"
    recipe.write_text("[[op]]\nresize = 50\n")
    assert_one_line_error(run_oxi("run", str(wide), str(tmp_path / "o.exr"), "--recipe", str(recipe)), 2,
                          "r.toml", "50%")


def test_a_box_keeps_the_aspect_by_default_and_stretch_fills_it(wide: Path, tmp_path: Path):
    fit, stretch, side = tmp_path / "fit.exr", tmp_path / "stretch.exr", tmp_path / "side.exr"
    assert run_oxi("resize", str(wide), str(fit), "--size", "10x10").returncode == 0
    assert size_of(fit) == (10, 5)  # 40x20 inside 10x10: the width fits, the height keeps 2:1
    assert run_oxi("run", str(wide), str(stretch), "--resize:fit=stretch", "10x10").returncode == 0
    assert size_of(stretch) == (10, 10)
    assert run_oxi("resize", str(wide), str(side), "--size", "0x10").returncode == 0
    assert size_of(side) == (20, 10)


def test_an_upscale_past_eight_times_needs_force(wide: Path, tmp_path: Path):
    out = tmp_path / "big.exr"
    res = run_oxi("run", str(wide), str(out), "--resize", "1000%")
    assert_one_line_error(res, 2, "10x upscale", "--force")
    assert not out.exists()
    assert run_oxi("run", str(wide), str(out), "--resize", "1000%", "--force").returncode == 0
    assert size_of(out) == (400, 200)
    assert_one_line_error(run_oxi("resize", str(wide), str(tmp_path / "h.exr"), "--size", "1048576x1048576"),
                          2, "32768", "--force")


def test_an_unknown_fit_mode_is_one_line_naming_the_modes(wide: Path, tmp_path: Path):
    assert_one_line_error(run_oxi("resize", str(wide), str(tmp_path / "o.exr"), "--size", "10x10", "--fit", "crop"),
                          2, "--fit", "fit, fill, pad, stretch")


def test_the_plan_shows_the_output_size(wide: Path, tmp_path: Path):
    res = run_oxi("run", str(wide), str(tmp_path / "o.exr"), "--resize", "50%", "--plan", "--backend", "cpu")
    assert res.returncode == 0, res.stderr
    assert "40x20 -> 20x10" in res.stdout
