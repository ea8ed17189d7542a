"""The native ACES 2.0 output transform against OpenColorIO: its tables against the ones OCIO's GPU renderer
ships, the op alone against OCIO's FixedFunction, and every ACES 2.0 view of the built-in configs on both
backends, on HDR data with negatives, NaN and +-Inf."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.formats.ocio_ops import ops_from_processor
from oxi_cli.ops import Aces2Output
from oxi_cli.ops import aces2 as aces2_module
from oxi_cli.ops.aces2 import CUSP_J, CUSP_M, GAMMA_TOP_INV, HUE, REACH_M, _build_tables, aces2_tables
from oxi_cli.ops.ocio_cpu import OcioCpu
from tests.color.oracle import ocio_reference, run_oxi
from tests.ops.harness import assert_close

CONFIGS = ("ocio://cg-config-latest", "ocio://studio-config-latest")
SOURCE = "ACEScg"
# Display-referred code values (0..1, or nits/100 before PQ), as the display/view test in
# test_configs_match_ocio.py: absolute.
VIEW_ATOL = 1e-4
# The op alone gives display-linear light up to peak / 100: 1e-4 of max(|value|, 1).
OP_RTOL = 1e-4


def _views(uri: str) -> list[tuple[str, str]]:
    config = OCIO.Config.CreateFromFile(uri)
    return [(d, v) for d in config.getDisplays() for v in config.getViews(d) if v.startswith("ACES 2.0")]


def _aces2_transforms() -> list[Any]:
    """Every distinct ACES 2.0 output FixedFunction the built-in configs' views use."""
    found: dict[tuple[float, ...], Any] = {}
    for uri in CONFIGS:
        config = OCIO.Config.CreateFromFile(uri)
        for display, view in _views(uri):
            group = config.getProcessor(OCIO.DisplayViewTransform(src=SOURCE, display=display, view=view))
            for t in group.getOptimizedProcessor(OCIO.OPTIMIZATION_LOSSLESS).createGroupTransform():
                fixed = isinstance(t, OCIO.FixedFunctionTransform)
                if fixed and t.getStyle() == OCIO.FIXED_FUNCTION_ACES_OUTPUT_TRANSFORM_20:
                    found[tuple(t.getParams())] = t
    return list(found.values())


TRANSFORMS = _aces2_transforms()


def _label(t: Any) -> str:
    peak, *prims = t.getParams()
    return f"{peak:g} nits, red {prims[0]:g},{prims[1]:g}"


def _ocio_gpu_tables(t: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OCIO's own tables, as its GPU renderer ships them: reach M (texture), cusp J, M, 1 / gamma (texture)
    and the cusp table's hues (an array in the shader text)."""
    desc = OCIO.GpuShaderDesc.CreateShaderDesc(language=OCIO.GPU_LANGUAGE_GLSL_4_0)
    OCIO.Config.CreateRaw().getProcessor(t).getDefaultGPUProcessor().extractGpuShaderInfo(desc)
    textures = {tex.textureName: np.asarray(tex.getValues(), np.float32) for tex in desc.getTextures()}
    reach = next(v for k, v in textures.items() if "reach_m" in k)
    cusp = next(v for k, v in textures.items() if "gamut_cusp" in k).reshape(-1, 3)
    text = re.search(r"hues_array\[\d+\] = float\[\d+\]\((.*?)\);", desc.getShaderText())
    assert text, "OCIO's shader no longer carries the hue table as an array"
    hues = np.array([float(v) for v in text.group(1).split(",")], np.float32)
    return reach, cusp, hues


def _hdr(shape: tuple[int, int], seed: int) -> np.ndarray:
    """Scene-linear HDR up to ~1e4 with negatives, tiny values, and NaN, +Inf, -Inf in one channel each."""
    rng = np.random.default_rng(seed)
    img = rng.lognormal(-1.0, 2.5, (*shape, 3)) * rng.choice([-1.0, 1.0, 1.0, 1.0], (*shape, 3))
    img[: shape[0] // 8] = rng.uniform(-1e-4, 1e-3, (shape[0] // 8, shape[1], 3))
    img = img.astype(np.float32)
    for row, value in enumerate((np.nan, np.inf, -np.inf)):
        img[shape[0] - 1 - row, :3] = np.diag([value] * 3)
    return img


def test_aces2_transforms_are_found_in_the_builtin_configs():
    assert len(TRANSFORMS) >= 8, [_label(t) for t in TRANSFORMS]


@pytest.mark.parametrize("transform", TRANSFORMS, ids=_label)
def test_tables_equal_the_ones_ocio_computes(transform):
    """Hues and reach M within a float32 step or two, the cusp's J, M and upper hull gamma within a few (OCIO
    bisects along the gamut's edges in float32, hue after hue, as ops/aces2.py does). Not bit for bit: numpy's
    float32 pow, sin and cos round differently on CPUs with other vector units (an AVX-512 host differed)."""
    peak, *limiting = transform.getParams()
    _, table = aces2_tables(float(peak), tuple(float(v) for v in limiting))
    reach, cusp, hues = _ocio_gpu_tables(transform)
    np.testing.assert_allclose(table[:, HUE], hues, rtol=3e-7, atol=1e-5, err_msg="hue")
    np.testing.assert_allclose(table[:, REACH_M], reach, rtol=1e-6, err_msg="reach M")
    # The upper hull's gamma comes out of a search over test points: a rounding apart can land one hue on the
    # neighbouring step (1 of 363 rows, 1.4e-4 relative, on the CPU of a 16-core host with an H100 GPU).
    for column, name, rtol in ((CUSP_J, "J", 1e-4), (CUSP_M, "M", 1e-4), (GAMMA_TOP_INV, "1 / gamma", 5e-4)):
        want = cusp[:, column - CUSP_J]
        np.testing.assert_allclose(table[:, column], want, rtol=rtol, err_msg=f"cusp {name}")


@pytest.mark.parametrize("transform", TRANSFORMS, ids=_label)
def test_op_alone_renders_ap0_as_ocios_fixed_function(backend, transform):
    """Display-linear out within 1e-4 of max(|value|, 1); NaN or Inf in any channel gives NaN in all three,
    as OCIO's renderer; negative achromatic response gives black."""
    peak, *limiting = transform.getParams()
    op = Aces2Output(peak, tuple(limiting))
    img = _hdr((64, 64), seed=int(peak))
    proc = OCIO.Config.CreateRaw().getProcessor(transform).getOptimizedCPUProcessor(OCIO.OPTIMIZATION_LOSSLESS)
    want = img.reshape(-1, 3).copy()
    proc.applyRGB(want)
    got = run_oxi(backend, [op], img)
    assert_close(got, want.reshape(img.shape), rtol=OP_RTOL, scale=1.0, inputs=img,
                 what=f"ACES 2.0 {_label(transform)} on {backend.name}", figure=_label(transform))


# A float32 evaluation of the transform carries rounding errors of a few ulps of its largest terms; a display
# channel near black can be the small difference of large ones (a saturated colour), and a steep PQ or gamma
# curve then magnifies that: the allowance adds what a change of LINEAR_ULPS times the pixel's largest linear
# channel does to the code values (OCIO's own result moves that much between float32 implementations).
LINEAR_ULPS = 2e-6


def _rounding_allowance(processor: Any, img: np.ndarray, where: np.ndarray) -> np.ndarray:
    """For the pixels `where`: how far the code values move when the ACES 2.0 step's linear output moves by
    LINEAR_ULPS of its largest channel, either way."""
    group = list(processor.getOptimizedProcessor(OCIO.OPTIMIZATION_LOSSLESS).createGroupTransform())
    k = next(i for i, t in enumerate(group) if isinstance(t, OCIO.FixedFunctionTransform))
    raw = OCIO.Config.CreateRaw()

    def steps(transforms: list[Any], px: np.ndarray) -> np.ndarray:
        px = np.ascontiguousarray(px, np.float32).copy()
        for t in transforms:
            raw.getProcessor(t).getOptimizedCPUProcessor(OCIO.OPTIMIZATION_LOSSLESS).applyRGB(px)
        return px

    linear = steps(group[: k + 1], img[where])
    step = LINEAR_ULPS * np.nan_to_num(np.abs(linear), posinf=0.0).max(axis=1, keepdims=True)
    base = steps(group[k + 1:], linear)
    moved = [np.abs(steps(group[k + 1:], linear + sign * step) - base) for sign in (-1.0, 1.0)]
    return np.nan_to_num(np.maximum(*moved))


@pytest.mark.parametrize("uri", CONFIGS)
def test_every_aces2_view_renders_as_ocio_with_the_native_op(backend, uri):
    """Within 1e-4 of OCIO's code values, plus, for a near-black channel made of the difference of large terms
    before a steep curve, what float32 rounding of the linear light (LINEAR_ULPS) does there."""
    config = OCIO.Config.CreateFromFile(uri)
    img = _hdr((96, 96), seed=20)
    failures = []
    views = _views(uri)
    for display, view in views:
        processor = config.getProcessor(OCIO.DisplayViewTransform(src=SOURCE, display=display, view=view))
        ops = ops_from_processor(processor)
        assert any(isinstance(op, Aces2Output) for op in ops), f"{display} / {view}: ACES 2.0 not native"
        assert not any("ACES_OUTPUT" in label for op in ops if isinstance(op, OcioCpu) for label in op.covers)
        got, want = run_oxi(backend, ops, img), ocio_reference(processor, img)
        allowed = np.full(img.shape, VIEW_ATOL)
        with np.errstate(invalid="ignore"):
            loose = (np.abs(got - want) > VIEW_ATOL).any(axis=-1)
        if loose.any():
            allowed[loose] += _rounding_allowance(processor, img, loose)
        try:
            assert_close(got, want, rtol=0.0, atol=allowed, inputs=img, what=f"{display} / {view} on {backend.name}",
                         figure=f"{display} / {view}")
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, f"{len(failures)} of {len(views)} views differ from OCIO:\n" + "\n".join(failures)


def test_each_accelerator_agrees_with_the_host_on_the_op_alone(each_accelerator, cpu_backend):
    op = Aces2Output(1000.0, (0.68, 0.32, 0.265, 0.69, 0.15, 0.06, 0.3127, 0.329))
    img = _hdr((64, 64), seed=5)
    name = each_accelerator.name
    assert_close(run_oxi(each_accelerator, [op], img), run_oxi(cpu_backend, [op], img), rtol=OP_RTOL, scale=1.0,
                 inputs=img, what=f"ACES 2.0 1000 nits P3: {name} vs {cpu_backend.name}",
                 figure=f"{name} vs {cpu_backend.name}")


def test_tables_read_back_from_the_cache_equal_freshly_built_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    limiting = (0.68, 0.32, 0.265, 0.69, 0.15, 0.06, 0.3127, 0.329)
    built = _build_tables(600.0, limiting)
    aces2_tables.cache_clear()
    for _ in range(2):  # the first call writes the cache file, the second reads it
        aces2_tables.cache_clear()
        params, table = aces2_tables(600.0, limiting)
        np.testing.assert_array_equal(params, built[0])
        np.testing.assert_array_equal(table, built[1])
    assert len(list(tmp_path.rglob("*.npz"))) == 1


def test_a_table_cache_folder_other_users_may_write_into_is_neither_read_nor_written(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "oxi" / "aces2"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    limiting = (0.68, 0.32, 0.265, 0.69, 0.15, 0.06, 0.3127, 0.329)
    built = _build_tables(1000.0, limiting)
    planted = aces2_module._cache_path(1000.0, limiting)
    np.savez(planted, params=built[0] * 2, table=built[1] * 2)  # what another user could leave there
    aces2_tables.cache_clear()
    params, table = aces2_tables(1000.0, limiting)
    np.testing.assert_array_equal(params, built[0])
    np.testing.assert_array_equal(table, built[1])
    assert [p.name for p in folder.iterdir()] == [planted.name]
