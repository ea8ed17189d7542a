"""Review frames (a display-referred PNG or JPEG) are 8-bit RGB unless asked otherwise; JPEG --quality and EXR DWA
levels (--compression dwab:45, as oiiotool spells them) are honoured, and levels out of range are one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from tests.cli.conftest import hdr_rgba, read_exr, run_oxi, write_exr
from tests.cli.test_cli_errors import assert_one_line_error

STUDIO = "ocio://studio-config-latest"
DISPLAY = ("--from", "ACEScg", "--display", "sRGB - Display", "--view", "Un-tone-mapped", "--config", STUDIO)


@pytest.fixture
def render(tmp_path: Path) -> Path:
    return write_exr(tmp_path / "render.exr", hdr_rgba(36, 48))


def _png(path: Path) -> np.ndarray:
    """The pixels as stored (pypng: 16-bit stays 16-bit), with the channels last."""
    import png

    width, height, rows, info = png.Reader(filename=str(path)).read()
    pixels = np.vstack([np.asarray(r) for r in rows]).reshape(height, width, info["planes"])
    return pixels.astype(np.uint16 if info["bitdepth"] == 16 else np.uint8)


def test_a_display_png_is_an_8_bit_rgb_review_frame(render: Path, tmp_path: Path):
    review, asked = tmp_path / "review.png", tmp_path / "asked.png"
    res = run_oxi("display", str(render), str(review), *DISPLAY)
    assert res.returncode == 0 and res.stderr == "", res.stderr  # dropping alpha and layers is no surprise here
    assert run_oxi("display", str(render), str(asked), *DISPLAY, "--out-type", "uint8", "--alpha").returncode == 0
    got = _png(review)
    assert got.dtype == np.uint8 and got.shape == (36, 48, 3)
    np.testing.assert_array_equal(got, _png(asked)[..., :3])  # the same picture, 8-bit as --out-type uint8 makes it


def test_alpha_and_16_bit_are_kept_when_asked(render: Path, tmp_path: Path):
    rgba, deep = tmp_path / "rgba.png", tmp_path / "deep.png"
    assert run_oxi("display", str(render), str(rgba), *DISPLAY, "--alpha").returncode == 0
    assert run_oxi("display", str(render), str(deep), *DISPLAY, "--out-type", "uint16").returncode == 0
    assert _png(rgba).shape == (36, 48, 4) and _png(rgba).dtype == np.uint8
    assert _png(deep).shape == (36, 48, 3) and _png(deep).dtype == np.uint16


def test_a_display_exr_and_a_scene_referred_png_are_no_review_frames(render: Path, tmp_path: Path):
    exr, texture = tmp_path / "shown.exr", tmp_path / "texture.png"
    assert run_oxi("display", str(render), str(exr), *DISPLAY).returncode == 0
    _, planes = read_exr(exr)
    assert planes["R"].dtype == np.float16 and "A" in planes and "diffuse.R" in planes
    res = run_oxi("colorspace", str(render), str(texture), "--from", "ACEScg", "--to", "sRGB Encoded Rec.709 (sRGB)",
                  "--config", STUDIO)
    assert res.returncode == 0, res.stderr
    assert _png(texture).dtype == np.uint16 and _png(texture).shape[-1] == 4  # as before: the half's nearest


def test_jpeg_quality_is_the_encoders(render: Path, tmp_path: Path):
    import imageio.v3 as iio

    review, low, default = tmp_path / "review.png", tmp_path / "low.jpg", tmp_path / "default.jpg"
    assert run_oxi("display", str(render), str(review), *DISPLAY).returncode == 0
    assert run_oxi("display", str(render), str(low), *DISPLAY, "--quality", "40").returncode == 0
    assert run_oxi("display", str(render), str(default), *DISPLAY).returncode == 0
    for path, quality in ((low, 40), (default, 95)):
        iio.imwrite(tmp_path / "want.jpg", _png(review), plugin="pillow", extension=".jpg", quality=quality)
        np.testing.assert_array_equal(iio.imread(path), iio.imread(tmp_path / "want.jpg"))
    assert low.stat().st_size < default.stat().st_size


@pytest.mark.parametrize(
    ("out", "args", "words"),
    [
        ("out.jpg", ("--quality", "0"), ("--quality must be 1..100", "0")),
        ("out.jpg", ("--quality", "101"), ("--quality must be 1..100", "101")),
        ("out.exr", ("--quality", "90"), ("--quality applies to JPEG outputs, not EXR", "dwab:45")),
        ("out.exr", ("--compression", "dwab:-1"), ("DWA compression level", "'-1'")),
        ("out.exr", ("--compression", "dwaa:lots"), ("DWA compression level", "'lots'")),
        ("out.exr", ("--compression", "zip:9"), ("zip takes no level", "zipCompressionLevel")),
        ("out.exr", ("--compression", "piz:3"), ("only dwaa and dwab take a level",)),
    ],
)
def test_levels_out_of_range_are_one_line_before_any_work(render: Path, tmp_path: Path, out: str, args: tuple,
                                                          words: tuple):
    res = run_oxi("cdl", str(render), str(tmp_path / out), "--sat", "0.9", *args)
    assert_one_line_error(res, 2, *words)
    assert not (tmp_path / out).exists()


def test_a_dwa_level_is_written_as_openexr_writes_it(tmp_path: Path):
    y, x = np.mgrid[0:96, 0:128]
    smooth = (np.sin(x / 9.0) * np.cos(y / 13.0) + 1.2).astype(np.float16)
    planes = {c: smooth * k for c, k in zip("RGB", (1.0, 0.8, 0.6), strict=True)}
    src = tmp_path / "src.exr"
    OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION}, dict(planes)).write(str(src))
    sizes = {}
    for level in ("45", "300"):
        out, want = tmp_path / f"dwab{level}.exr", tmp_path / f"want{level}.exr"
        res = run_oxi("run", str(src), str(out), "--compression", f"dwab:{level}")
        assert res.returncode == 0, res.stderr
        header = {"compression": OpenEXR.DWAB_COMPRESSION, "dwaCompressionLevel": float(level)}
        OpenEXR.File(header, dict(planes)).write(str(want))
        got_header, got = read_exr(out)
        assert got_header["dwaCompressionLevel"] == float(level) and "DWAB" in str(got_header["compression"])
        _, expected = read_exr(want)
        for c in "RGB":
            np.testing.assert_array_equal(got[c], expected[c])
        sizes[level] = out.stat().st_size
    assert sizes["300"] < sizes["45"]
    plain = tmp_path / "zip.exr"
    assert run_oxi("run", str(tmp_path / "dwab300.exr"), str(plain), "--compression", "zip").returncode == 0
    assert "dwaCompressionLevel" not in read_exr(plain)[0]  # the level goes with the codec it was for


def test_a_recipe_sets_the_jpeg_quality_and_the_flag_wins(render: Path, tmp_path: Path):
    recipe = tmp_path / "review.toml"
    recipe.write_text(f'[output]\nquality = 30\n\n[[op]]\ndisplay = "sRGB - Display"\nfrom = "ACEScg"\n'
                      f'view = "Un-tone-mapped"\nconfig = "{STUDIO}"\n')
    by_recipe, by_flag, flagged = tmp_path / "r.jpg", tmp_path / "f.jpg", tmp_path / "w.jpg"
    assert run_oxi("run", "--recipe", str(recipe), str(render), str(by_recipe)).returncode == 0
    assert run_oxi("display", str(render), str(by_flag), *DISPLAY, "--quality", "30").returncode == 0
    assert by_recipe.read_bytes() == by_flag.read_bytes()
    assert run_oxi("run", "--recipe", str(recipe), str(render), str(flagged), "--quality", "90").returncode == 0
    assert flagged.stat().st_size > by_recipe.stat().st_size
