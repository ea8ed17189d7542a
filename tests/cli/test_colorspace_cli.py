"""`oxi colorspace`, `oxi display`, their `oxi run` flags and recipe keys, and OpenColorIO staying out of jobs that
do not use it (the integer-output warnings: test_output_losses.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import PyOpenColorIO as OCIO

from tests.cli.conftest import read_exr, run_oxi
from tests.cli.test_cli_errors import assert_one_line_error

STUDIO = "ocio://studio-config-latest"
SDR_VIEW = "ACES 2.0 - SDR 100 nits (Rec.709)"


def _rgb(planes: dict[str, np.ndarray]) -> np.ndarray:
    return np.stack([planes[c].astype(np.float32) for c in "RGB"], axis=-1)


def _ocio(src: str, dst: str, rgb: np.ndarray) -> np.ndarray:
    cpu = OCIO.Config.CreateFromFile(STUDIO).getProcessor(src, dst).getOptimizedCPUProcessor(OCIO.OPTIMIZATION_LOSSLESS)
    px = rgb.reshape(-1, 3).copy()
    cpu.applyRGB(px)
    return px.reshape(rgb.shape)


def test_colorspace_converts_rgb_as_ocio_and_leaves_alpha_and_aovs(plate: Path, tmp_path: Path):
    out = tmp_path / "cct.exr"
    res = run_oxi("colorspace", str(plate), str(out), "--from", "ACEScg", "--to", "ACEScct", "--config", STUDIO)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""  # ACEScg -> ACEScct is native: no fallback warning
    _, before = read_exr(plate)
    _, after = read_exr(out)
    want = _ocio("ACEScg", "ACEScct", _rgb(before)).astype(np.float16).astype(np.float32)
    np.testing.assert_allclose(_rgb(after), want, rtol=1e-3, atol=1e-3)  # half output: one half ulp
    for name in ("A", "diffuse.R", "diffuse.G", "diffuse.B"):
        assert np.array_equal(after[name].view(np.uint16), before[name].view(np.uint16)), name


def test_names_aliases_and_roles_resolve_as_ocio(plate: Path, tmp_path: Path):
    by_name, by_alias = tmp_path / "a.exr", tmp_path / "b.exr"
    assert run_oxi("colorspace", str(plate), str(by_name), "--from", "ACEScg", "--to", "ACEScct",
                   "--config", STUDIO).returncode == 0
    res = run_oxi("colorspace", str(plate), str(by_alias), "--from", "scene_linear", "--to", "ocio:acescct_ap1_scene",
                  "--config", STUDIO)
    assert res.returncode == 0, res.stderr
    assert by_name.read_bytes() == by_alias.read_bytes()


def test_unknown_colour_space_is_one_line_with_the_closest_names(plate: Path, tmp_path: Path):
    res = run_oxi("colorspace", str(plate), str(tmp_path / "o.exr"), "--from", "ACEScgg", "--to", "ACEScct")
    assert_one_line_error(res, 2, "ACEScgg", "closest", "ACEScg")
    res = run_oxi("display", str(plate), str(tmp_path / "o.exr"), "--from", "ACEScg", "--display", "sRGB - Display",
                  "--view", "ACES 2.0 SDR", "--config", STUDIO)
    assert_one_line_error(res, 2, "unknown view", SDR_VIEW)


def test_colorspace_list_json_names_spaces_displays_views_and_looks():
    res = run_oxi("colorspace", "--list", "--json", "--config", STUDIO)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert "ACEScct" in [cs["name"] for cs in doc["colorspaces"]]
    assert SDR_VIEW in doc["displays"]["sRGB - Display"]
    assert doc["roles"]["scene_linear"] == "ACEScg"
    assert isinstance(doc["looks"], list)


def test_display_renders_an_8_bit_png_as_ocio_without_a_clipping_warning(plate: Path, tmp_path: Path):
    import imageio.v3 as iio

    out = tmp_path / "review.png"
    res = run_oxi("display", str(plate), str(out), "--from", "ACEScg", "--display", "sRGB - Display", "--view",
                  SDR_VIEW, "--config", STUDIO, "--out-type", "uint8")
    assert res.returncode == 0, res.stderr
    assert "clipped" not in res.stderr
    _, before = read_exr(plate)
    dvt = OCIO.DisplayViewTransform(src="ACEScg", display="sRGB - Display", view=SDR_VIEW)
    cpu = OCIO.Config.CreateFromFile(STUDIO).getProcessor(dvt).getOptimizedCPUProcessor(OCIO.OPTIMIZATION_LOSSLESS)
    px = _rgb(before).reshape(-1, 3).copy()
    cpu.applyRGB(px)
    want = np.clip(np.rint(px.reshape(_rgb(before).shape) * 255.0), 0, 255)
    got = iio.imread(out)[..., :3].astype(np.float64)
    assert np.abs(got - want).max() <= 1.0


def test_run_chains_colorspace_steps_with_other_colour_ops(plate: Path, tmp_path: Path):
    single, chained = tmp_path / "single.exr", tmp_path / "chained.exr"
    assert run_oxi("colorspace", str(plate), str(single), "--from", "ACEScg", "--to", "ACEScct",
                   "--config", STUDIO, "--out-type", "float").returncode == 0
    res = run_oxi("run", str(plate), str(chained), "--config", STUDIO, "--colorspace", "ACEScg:ACEScct",
                  "--colorspace", "ACEScct:ACEScg", "--colorspace", "lin_ap1:ACEScct", "--out-type", "float")
    assert res.returncode == 0, res.stderr
    np.testing.assert_allclose(_rgb(read_exr(chained)[1]), _rgb(read_exr(single)[1]), rtol=1e-5, atol=1e-6)


def test_recipe_display_step_matches_the_display_command(plate: Path, tmp_path: Path):
    recipe = tmp_path / "review.toml"
    recipe.write_text(f'[[op]]\ndisplay = "sRGB - Display"\nfrom = "ACEScg"\nview = "Un-tone-mapped"\n'
                      f'config = "{STUDIO}"\n')
    by_recipe, by_command = tmp_path / "r.exr", tmp_path / "c.exr"
    res = run_oxi("run", "--recipe", str(recipe), str(plate), str(by_recipe))
    assert res.returncode == 0, res.stderr
    assert run_oxi("display", str(plate), str(by_command), "--from", "ACEScg", "--display", "sRGB - Display",
                   "--view", "Un-tone-mapped", "--config", STUDIO).returncode == 0
    assert np.array_equal(_rgb(read_exr(by_recipe)[1]), _rgb(read_exr(by_command)[1]))


def test_info_shows_the_colour_space_attributes(tmp_path: Path):
    from tests.cli.conftest import hdr_rgba, write_exr

    exr = write_exr(tmp_path / "ap1.exr", hdr_rgba(4, 4),
                    chromaticities=(0.713, 0.293, 0.165, 0.830, 0.128, 0.044, 0.32168, 0.33767))
    res = run_oxi("info", str(exr), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    doc = doc[0] if isinstance(doc, list) else doc
    assert doc["colour"]["primaries"] == "ACES AP1"


def _imports_ocio(*args: str) -> bool:
    # What a process of its own imports (through the service the command itself imports none of it).
    env = {**os.environ, "OXI_BACKEND": "cpu", "OXI_SERVER": "off"}
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "oxi_cli", *args], capture_output=True,
                         text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return "PyOpenColorIO" in res.stderr


def test_opencolorio_is_imported_only_by_jobs_that_use_it(plate: Path, tmp_path: Path):
    assert not _imports_ocio("--help")
    assert not _imports_ocio("cdl", str(plate), str(tmp_path / "g.exr"), "--sat", "1.1")
    assert _imports_ocio("colorspace", str(plate), str(tmp_path / "c.exr"), "--from", "ACEScg", "--to", "ACEScct")
