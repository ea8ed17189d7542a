"""--unpremult from the command line: a premultiplied CG render graded unpremultiplied as oiiotool's
`--colorconvert:unpremult=1` grades it (light at alpha 0 graded undivided), alpha untouched, every view by its own
alpha; off by default, as OCIO and oiiotool."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import OpenEXR
import PyOpenColorIO as OCIO
import pytest
import tifffile

from tests.cli.conftest import read_exr, run_oxi
from tests.color.oracle import ocio_unpremultiplied
from tests.oiio_tools import needs_oiiotool, oiiotool
from tests.ops.harness import assert_close

GRADE = ["--slope", "1.2,1.0,0.8", "--offset", "0.02", "--power", "1.5", "--sat", "0.8"]


def _grade() -> object:
    t = OCIO.CDLTransform()
    t.setSlope([1.2, 1.0, 0.8])
    t.setOffset([0.02] * 3)
    t.setPower([1.5] * 3)
    t.setSat(0.8)
    t.setStyle(OCIO.CDL_NO_CLAMP)
    return OCIO.Config.CreateRaw().getProcessor(t)


def cg_render(height: int, width: int, seed: int) -> np.ndarray:
    """Premultiplied RGBA float32 as a renderer writes it: a soft-edged object (alpha 1 inside, fractional at
    its edge) over an empty background (alpha 0, colour 0), and a glow (alpha 0, colour above 0)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    radius = np.hypot(y - height / 2, x - width / 2) / (min(height, width) / 3)
    alpha = np.clip((1.0 - radius) * 4.0, 0.0, 1.0).astype(np.float32)
    straight = rng.lognormal(-0.5, 1.0, (height, width, 3)).astype(np.float32)
    rgba = np.concatenate([straight * alpha[..., None], alpha[..., None]], axis=-1)
    rgba[:3, :5, :3] = rng.uniform(0.05, 0.5, (3, 5, 3))  # glow: light with no coverage
    return rgba


def write(path: Path, layers: dict[str, np.ndarray], **attrs: object) -> Path:
    """EXR float channels: each layer prefix ("" for the picture) gets R, G, B and, with 4 planes, A."""
    channels = {}
    for prefix, rgba in layers.items():
        for i, c in enumerate("RGBA"[: rgba.shape[-1]]):
            channels[prefix + c] = np.ascontiguousarray(rgba[..., i])
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage, **attrs}
    OpenEXR.File(header, channels).write(str(path))
    return path


def layer(planes: dict[str, np.ndarray], prefix: str = "", alpha: bool = True) -> np.ndarray:
    return np.stack([planes[prefix + c] for c in "RGBA"[: 4 if alpha else 3]], axis=-1)


def assert_unpremultiplied_grade(got: np.ndarray, src: np.ndarray) -> None:
    want = ocio_unpremultiplied(_grade(), src)
    assert_close(got[..., :3], want[..., :3], rtol=2e-6, scale=np.abs(want[..., :3]).max(-1, keepdims=True),
                 inputs=src, what="graded unpremultiplied")
    np.testing.assert_array_equal(got[..., 3].view(np.uint32), src[..., 3].view(np.uint32), err_msg="alpha")


@pytest.fixture
def render(tmp_path: Path) -> Path:
    return write(tmp_path / "cg.exr", {"": cg_render(40, 56, 1)})


def test_the_issues_grade_with_unpremult_is_unpremultiply_grade_premultiply(render: Path, tmp_path: Path,
                                                                           each_backend):
    # each_backend is opened here only to skip (a failure under OXI_REQUIRE_GPU=1) where it will not open, as every
    # backend test does; the `oxi` process opens its own by name.
    out = tmp_path / "out.exr"
    run = run_oxi("cdl", str(render), str(out), *GRADE, "--unpremult", "--backend", each_backend.name)
    assert run.returncode == 0, run.stderr
    assert_unpremultiplied_grade(layer(read_exr(out)[1]), layer(read_exr(render)[1]))


def test_the_default_grades_the_stored_values_as_ocio_does(render: Path, tmp_path: Path):
    plain, off, on = (tmp_path / f"{n}.exr" for n in ("plain", "off", "on"))
    assert run_oxi("cdl", str(render), str(plain), *GRADE).returncode == 0
    assert run_oxi("cdl", str(render), str(off), *GRADE, "--no-unpremult").returncode == 0
    assert run_oxi("cdl", str(render), str(on), *GRADE, "--unpremult").returncode == 0
    src, default = layer(read_exr(render)[1]), layer(read_exr(plain)[1])
    np.testing.assert_array_equal(default, layer(read_exr(off)[1]))
    px = np.ascontiguousarray(src[..., :3]).reshape(-1, 3).copy()
    _grade().getOptimizedCPUProcessor(OCIO.OPTIMIZATION_LOSSLESS).applyRGB(px)
    np.testing.assert_allclose(default[..., :3], px.reshape(src[..., :3].shape), rtol=2e-6, atol=1e-7)
    background = (src[..., 3] == 0) & (src[..., :3] == 0).all(-1)
    assert np.allclose(default[background, :3], 0.02**1.5, rtol=1e-5)  # the issue's 0.0028
    edge = (src[..., 3] > 0) & (src[..., 3] < 1)
    assert np.abs(layer(read_exr(on)[1])[edge, :3] - default[edge, :3]).max() > 0.05


def test_each_view_is_unpremultiplied_by_its_own_alpha_and_a_layer_without_alpha_as_is(tmp_path: Path):
    left, right = cg_render(24, 32, 2), cg_render(24, 32, 3)[:, ::-1].copy()  # the eyes' alphas differ
    aov = cg_render(24, 32, 4)[..., :3].copy()
    src = write(tmp_path / "mv.exr", {"": left, "right.": right, "diffuse.": aov}, multiView=["left", "right"])
    out, plain = tmp_path / "out.exr", tmp_path / "plain.exr"
    run = run_oxi("cdl", str(src), str(out), *GRADE, "--unpremult", "--layers", "diffuse")
    assert run.returncode == 0, run.stderr
    assert run_oxi("cdl", str(src), str(plain), *GRADE, "--layers", "diffuse").returncode == 0
    got, without = read_exr(out)[1], read_exr(plain)[1]
    assert not np.array_equal(left[..., 3], right[..., 3])
    assert_unpremultiplied_grade(layer(got), left)
    assert_unpremultiplied_grade(layer(got, "right."), right)
    # diffuse has no alpha of its own: graded as it is, as without --unpremult
    np.testing.assert_array_equal(layer(got, "diffuse.", alpha=False), layer(without, "diffuse.", alpha=False))


def test_help_says_the_default_with_an_example():
    run = run_oxi("cdl", "--help")
    assert run.returncode == 0
    text = " ".join(run.stdout.split())
    assert "--unpremult" in text and "--no-unpremult" in text and "Default off" in text
    assert "[run] unpremult = true" in text and "--offset 0.02 --unpremult" in text


# OpenImageIO's own test of colorconvert with unpremult (testsuite/oiiotool-color): grey rising left to right,
# alpha falling top to bottom to 0 (light with no coverage along the bottom rows), written as uint8 TIFF.
GREYALPHA = "fill:topleft=0,0,0,1:topright=1,1,1,1:bottomleft=0,0,0,0:bottomright=1,1,1,0"
LIN, SRGB = "Linear Rec.709 (sRGB)", "sRGB Encoded Rec.709 (sRGB)"


def _srgb(x: np.ndarray) -> np.ndarray:
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.abs(x) ** (1 / 2.4) - 0.055)


@needs_oiiotool
@pytest.mark.parametrize("depth", ["uint8", "float"])
def test_unpremult_conversion_matches_oiiotool_colorconvert(tmp_path: Path, depth: str):
    """`oxi colorspace --unpremult` against `oiiotool --colorconvert:unpremult=1` on OIIO's grey-with-alpha test
    image, linear to sRGB: the alpha-0 rows (0.29 apart when oxi kept them unconverted) now match exactly. Where
    alpha > 0, uint8: oiiotool's OCIO processor is the default-optimised one, whose fast pow moves values lying
    within 3e-4 of a half step across it (235.4997 -> 236): oxi's are the float64 values rounded (within half a
    step plus 1e-3), oiiotool's within half a step plus 2e-3, and the two at most one step apart; float: within
    5e-5 of each other (OCIO's fast pow, ~2.5e-5 relative)."""
    src, theirs, ours = tmp_path / "greyalpha.tif", tmp_path / "oiio.tif", tmp_path / "oxi.tif"
    config = "ocio://cg-config-latest"
    env = {**os.environ, "OCIO": config}
    oiiotool("--pattern", GREYALPHA, "64x64", "4", "-d", depth, "-o", str(src), env=env)
    oiiotool(str(src), "--colorconvert:unpremult=1", LIN, SRGB, "-o", str(theirs), env=env)
    run = run_oxi("colorspace", str(src), str(ours), "--from", LIN, "--to", SRGB, "--unpremult", "--config", config)
    assert run.returncode == 0, run.stderr
    scale = 255.0 if depth == "uint8" else 1.0
    source, want, got = (tifffile.imread(p).astype(np.float64) / scale for p in (src, theirs, ours))
    alpha = source[..., 3]
    assert (alpha == 0).sum() >= 64 and (source[alpha == 0, :3] > 0).any()
    # OIIO's semantics in float64: divide by alpha (1 where under FLT_MIN), encode, multiply back.
    divisor = np.where(alpha > 0, alpha, 1.0)[..., None]
    exact = _srgb(source[..., :3] / divisor) * divisor
    np.testing.assert_array_equal(got[..., 3], source[..., 3])
    if depth == "float":
        np.testing.assert_allclose(got[..., :3], want[..., :3], atol=5e-5)
        np.testing.assert_allclose(got[..., :3], exact, atol=5e-6)
        return
    np.testing.assert_array_equal(got[alpha == 0], want[alpha == 0])
    assert np.abs(got[..., :3] - exact).max() * 255 <= 0.5 + 1e-3
    assert np.abs(want[..., :3] - exact).max() * 255 <= 0.5 + 2e-3
    assert np.abs(got - want).max() * 255 <= 1.0 + 1e-9
