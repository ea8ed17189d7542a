"""Each accelerator (every registered backend but the host: wgpu's GPU today) against the host's CPU backend on the
same random HDR float32 inputs: every op and option.

Bound: |accelerator - cpu| <= 1e-5 * max(|cpu|, s) + FLT_MIN, where s is the size of the terms a float32 kernel
rounds (CDL: reference.cdl's scale; matrix: Σ|m·v| + |offset|; LUTs: the largest table value, since
results are convex mixes of table entries; resize/blur: Σ|w|·|v|; place only copies: bit for bit). The backends
do the same float32 arithmetic in the same order, so the slack covers only fused multiply-adds and the GPU's pow.

NaN/Inf (stated, and pinned by the non-finite cases below): results must be NaN and ±Inf exactly where
the host's are. Colour ops follow OCIO: CDL turns a NaN after slope/offset into 0 before the power, an
infinite channel makes a `noclamp` pixel NaN (Inf - Inf in the saturation step) and `asc` clamps ±Inf;
matrices multiply NaN/Inf through (0 * Inf is NaN), except diagonal ones, which scale each channel alone
as OCIO's do; LUT inputs that are NaN count as the domain minimum, ±Inf clamp to the domain ends. Resize and
blur propagate NaN/Inf to every output whose taps read them, zero-weight taps included.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from oxi_cli.ops import Blur, Cdl, Lut1d, Lut3d, Matrix, Place, Resize
from oxi_cli.ops.premult import unpremultiplied
from tests import reference as ref
from tests.ops.harness import FLT_MIN, assert_bits_equal, assert_close, run_color, run_spatial

RTOL = 1e-5
SHAPE = (23, 37)  # odd on purpose
CHANNELS = {"rgb": 3, "rgba": 4, "rgba_plus_z": 5}


def _finite(img: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(img), img, 0.0)


def _color_parity(accelerator: Any, cpu: Any, img: np.ndarray, method: str, op: Any, *args: Any, scale: Any,
                  inplace: bool = True) -> np.ndarray:
    want = run_color(cpu, img, method, op, *args, inplace=inplace)
    got = run_color(accelerator, img, method, op, *args, inplace=inplace)
    assert_close(got, want, rtol=RTOL, scale=scale, atol=FLT_MIN, inputs=img, what=f"{method} {op!r:.120}")
    return got


def _spatial_parity(accelerator: Any, cpu: Any, img: np.ndarray, method: str, op: Any, out_hw: tuple[int, int],
                    wy: np.ndarray, wx: np.ndarray) -> np.ndarray:
    want = run_spatial(cpu, img, method, op, out_hw)
    got = run_spatial(accelerator, img, method, op, out_hw)
    magnitude = ref.separable_magnitude(_finite(img), wy, wx)
    assert_close(got, want, rtol=RTOL, scale=magnitude, atol=FLT_MIN, what=f"{method} {op} {img.shape}")
    return got


# --- CDL -----------------------------------------------------------------------------------------------

CDL_PARAMS = {
    "warm": dict(slope=(1.12, 0.97, 0.88), offset=(0.012, -0.004, 0.021), power=(1.08, 0.95, 1.21), sat=0.85),
    "steep": dict(slope=(0.6, 1.4, 2.1), offset=(-0.05, 0.03, 0.2), power=(0.55, 1.9, 1.3), sat=1.6),
    "power_one": dict(slope=(1.2, 0.8, 1.05), offset=(0.02, -0.03, 0.0), power=(1.0, 1.0, 1.0), sat=0.6),
}


def _cdl_scale(op: Cdl, img: np.ndarray) -> np.ndarray:
    f32 = lambda v: np.asarray(v, np.float32).astype(np.float64)  # noqa: E731 - kernels get float32 params
    _, scale = ref.cdl(_finite(img[..., :3]), f32(op.slope), f32(op.offset), f32(op.power),
                       float(np.float32(op.sat)), op.style)
    full = np.ones(img.shape)
    full[..., :3] = scale
    return full


@pytest.mark.parametrize("nonfinite", [False, True], ids=["finite", "nan_inf"])
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("params", CDL_PARAMS)
@pytest.mark.parametrize("style", ["noclamp", "asc"])
def test_cdl_matches_the_host(each_accelerator, cpu_backend, style, params, channels, nonfinite):
    img = ref.hdr_image((*SHAPE, CHANNELS[channels]), seed=3, nonfinite=nonfinite)
    op = Cdl(style=style, **CDL_PARAMS[params])
    got = _color_parity(each_accelerator, cpu_backend, img, "cdl", op, scale=_cdl_scale(op, img))
    assert_bits_equal(got[..., 3:], img[..., 3:], "channels after RGB pass through the CDL")


def test_cdl_nan_counts_as_zero_before_the_power_as_ocio(each_accelerator):
    # Pinned independently of the host: a NaN channel behaves as an input that lands exactly on 0.
    op = Cdl(**CDL_PARAMS["warm"])
    px = np.array([[[np.nan, 0.5, 0.25], [-op.offset[0] / op.slope[0], 0.5, 0.25]]], np.float32)
    out = run_color(each_accelerator, px, "cdl", op)
    np.testing.assert_allclose(out[0, 0], out[0, 1], rtol=1e-6)


@pytest.mark.parametrize("inplace", [True, False], ids=["in_place", "separate_dst"])
def test_cdl_into_separate_destination_matches_in_place(each_accelerator, cpu_backend, inplace):
    img = ref.hdr_image((*SHAPE, 4), seed=5, nonfinite=True)
    op = Cdl(**CDL_PARAMS["steep"])
    got = _color_parity(each_accelerator, cpu_backend, img, "cdl", op, scale=_cdl_scale(op, img), inplace=inplace)
    assert_bits_equal(got[..., 3], img[..., 3], "alpha passes through")


# --- matrix --------------------------------------------------------------------------------------------

def _dense(n: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    m = rng.uniform(-0.4, 0.4, {9: (3, 3), 12: (3, 4), 16: (4, 4)}[n])
    for i in range(min(m.shape)):
        m[i, i] += 1.0
    return m.ravel().tolist()


MATRICES = {
    "3x3": (_dense(9, 1), None),
    "3x3_with_zeros": ([0.6, 0.3, 0.1, 0.0, 0.9, 0.1, 0.1, 0.0, 0.9], None),
    "3x4": (_dense(12, 3), None),
    "4x4": (_dense(16, 4), None),
    "4x4_offset": (_dense(16, 5), (0.01, 0.02, -0.03, 0.5)),
}


@pytest.mark.parametrize("nonfinite", [False, True], ids=["finite", "nan_inf"])
@pytest.mark.parametrize("channels", CHANNELS)
@pytest.mark.parametrize("name", MATRICES)
def test_matrix_matches_the_host(each_accelerator, cpu_backend, name, channels, nonfinite):
    values, offset = MATRICES[name]
    op = Matrix.from_values(values, offset)
    c = CHANNELS[channels]
    has_alpha = c >= 4 and len(values) == 16
    img = ref.hdr_image((*SHAPE, c), seed=11, nonfinite=nonfinite)
    v = np.concatenate([img[..., :3], img[..., 3:4] if has_alpha else np.ones((*SHAPE, 1), np.float32)], -1)
    _, terms = ref.matrix(_finite(v), op.array, op.offset)
    scale = np.ones(img.shape)
    scale[..., : 4 if has_alpha else 3] = terms[..., : 4 if has_alpha else 3]
    got = _color_parity(each_accelerator, cpu_backend, img, "matrix", op, has_alpha, scale=scale)
    first_untouched = 4 if has_alpha else 3
    assert_bits_equal(got[..., first_untouched:], img[..., first_untouched:], "other channels pass through")


@pytest.mark.parametrize("name", MATRICES)
def test_matrix_rows_whose_terms_cancel_give_the_hosts_bits(each_accelerator, cpu_backend, name):
    """Each product is rounded before it is added, as OCIO and the CPU do: a driver that fuses them into fma
    (NVIDIA's) moved ACES2065-1 -> ACEScg outputs near 0 of terms near 1e5 by 2.5e-3."""
    values, offset = MATRICES[name]
    op = Matrix.from_values(values, offset)
    img = ref.hdr_image((*SHAPE, 3), seed=23, nonfinite=False)
    img[::2] *= 1e4  # terms far larger than the rows' sums where signs differ
    got = run_color(each_accelerator, img, "matrix", op, False)
    assert_bits_equal(got, run_color(cpu_backend, img, "matrix", op, False), f"{name} on {each_accelerator.name}")


# --- LUTs ----------------------------------------------------------------------------------------------

def _table(shape: tuple[int, ...], seed: int) -> np.ndarray:
    # Smooth ramp plus noise, with values outside 0..1 as real HDR LUTs have.
    rng = np.random.default_rng(seed)
    return (rng.uniform(-0.2, 1.5, shape)).astype(np.float32)


LUT1D = {
    "size2": (2, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "size17": (17, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "size4096_domain": (4096, (-0.5, -0.25, 0.0), (4.0, 2.0, 8.0)),
}


@pytest.mark.parametrize("channels", ["rgb", "rgba"])
@pytest.mark.parametrize("name", LUT1D)
def test_lut1d_matches_the_host(each_accelerator, cpu_backend, name, channels):
    n, lo, hi = LUT1D[name]
    op = Lut1d(_table((n, 3), seed=n), lo, hi)
    img = ref.lut_inputs((*SHAPE, CHANNELS[channels]), lo, hi, seed=n)
    got = _color_parity(each_accelerator, cpu_backend, img, "lut1d", op, scale=float(np.abs(op.table).max()))
    assert_bits_equal(got[..., 3:], img[..., 3:], "alpha passes through")


LUT3D = {
    "size2": (2, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "size17": (17, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "size33_domain": (33, (-0.125, -0.5, 0.0), (2.0, 1.5, 16.0)),
    "size65": (65, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
}


@pytest.mark.parametrize("channels", ["rgb", "rgba"])
@pytest.mark.parametrize("interp", ["tetrahedral", "trilinear"])
@pytest.mark.parametrize("name", LUT3D)
def test_lut3d_matches_the_host(each_accelerator, cpu_backend, name, interp, channels):
    n, lo, hi = LUT3D[name]
    op = Lut3d(_table((n, n, n, 3), seed=n), lo, hi, interp)
    img = ref.lut_inputs((*SHAPE, CHANNELS[channels]), lo, hi, seed=n + 1)
    got = _color_parity(each_accelerator, cpu_backend, img, "lut3d", op, scale=float(np.abs(op.table).max()))
    assert_bits_equal(got[..., 3:], img[..., 3:], "alpha passes through")


def test_lut3d_256_cube_larger_than_a_128mib_binding_matches_the_host(each_accelerator, cpu_backend):
    # 256^3 entries * 12 bytes = 201 MB: two bindings on lavapipe, whose limit is 128 MiB.
    n = 256
    table = np.random.default_rng(256).random((n, n, n, 3), dtype=np.float32)
    op = Lut3d(table)
    img = ref.lut_inputs((9, 31, 3), (0, 0, 0), (1, 1, 1), seed=256)
    img[0, :8, :3] = [[1, 1, 1], [0.999, 0.999, 0.999], [0.5, 0.5, 0.5], [1, 0, 0.5], [0, 1, 1], [0.2, 0.9, 0.99],
                      [0.998, 0.001, 0.7], [0, 0, 0]]
    _color_parity(each_accelerator, cpu_backend, img, "lut3d", op, scale=1.0)


# --- colour chains, fused in one pass ------------------------------------------------------------------

def _smooth_lut3d(n: int, seed: int, **kwargs) -> Lut3d:
    """A look-like 3D LUT: a cross-channel mix and a gentle curve of the grid, values beyond 0..1."""
    rng = np.random.default_rng(seed)
    g = np.linspace(0.0, 1.0, n)
    rgb = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1)
    mix = np.eye(3) * 0.8 + rng.uniform(-0.1, 0.2, (3, 3))
    return Lut3d((1.2 * np.clip(rgb @ mix.T, 0.0, None) ** 0.9 - 0.05).astype(np.float32), **kwargs)


def _chain(seed: int, with_alpha_matrix: bool) -> list:
    # Smooth tables, as real looks are: a chain of noise LUTs would amplify any float32 rounding a
    # thousandfold from one op to the next, in every implementation.
    rng = np.random.default_rng(seed)
    ramp = np.linspace(0.0, 1.0, 33)[:, None]
    return [
        Cdl(**CDL_PARAMS["warm"]),
        Matrix.from_values(_dense(16 if with_alpha_matrix else 9, seed)),
        Lut1d((1.3 * ramp ** np.array([0.8, 1.0, 1.25]) - 0.1).astype(np.float32), (-0.25,) * 3, (8.0,) * 3),
        _smooth_lut3d(17, seed, domain_min=(-0.1, 0.0, 0.0), domain_max=(1.5, 2.0, 4.0)),
        Cdl(**CDL_PARAMS["steep"], style="asc"),
        _smooth_lut3d(9, seed + 1, interp="trilinear"),
        Matrix.from_values(rng.uniform(-0.3, 1.2, 12).tolist()),
    ]


def _chain_on(backend: Any, img: np.ndarray, ops: list[Any], has_alpha: bool) -> np.ndarray:
    src = backend.upload(img.copy())
    backend.color_chain(src, src, ops, has_alpha)
    return np.array(backend.download(src), dtype=np.float32)


@pytest.mark.parametrize("nonfinite", [False, True], ids=["finite", "nan_inf"])
@pytest.mark.parametrize(("channels", "alpha_matrix"), [(3, False), (4, False), (4, True), (5, True)],
                         ids=["rgb", "rgba", "rgba_alpha_matrix", "rgba_plus_z_alpha_matrix"])
def test_colour_chain_matches_the_host(each_accelerator, cpu_backend, channels, alpha_matrix, nonfinite):
    img = ref.hdr_image((*SHAPE, channels), seed=channels, nonfinite=nonfinite)
    ops = _chain(channels, alpha_matrix)
    has_alpha = channels >= 4
    want, got = (_chain_on(backend, img, ops, has_alpha) for backend in (cpu_backend, each_accelerator))
    # Seven ops deep, the CPU's and GPU's float32 roundings (fused multiply-adds, pow) compound through
    # steep curves and LUT cells: compared against the largest value the chain can produce.
    assert_close(got, want, rtol=RTOL, scale=float(np.nanmax(np.abs(want[np.isfinite(want)]))), atol=FLT_MIN,
                 inputs=img, what="colour chain")
    first = 4 if alpha_matrix else 3
    assert_bits_equal(got[..., first:], img[..., first:], "channels the chain does not touch pass through")


def test_colour_chain_equals_its_ops_one_by_one_on_each_accelerator(each_accelerator):
    img = ref.hdr_image((*SHAPE, 4), seed=9, nonfinite=True)
    ops = _chain(9, True)
    fused = each_accelerator.upload(img.copy())
    each_accelerator.color_chain(fused, fused, ops, True)
    single = each_accelerator.upload(img.copy())
    for op in ops:
        each_accelerator.color_chain(single, single, [op], True)
    assert_bits_equal(each_accelerator.download(fused), each_accelerator.download(single), "fused chain vs op by op")


@pytest.mark.parametrize("alpha_matrix", [False, True], ids=["rgba", "rgba_alpha_matrix"])
def test_unpremultiplied_colour_chain_matches_the_host(each_accelerator, cpu_backend, alpha_matrix):
    """--unpremult's chain (alpha 0, 1 and fractional; NaN/Inf in colour) gives the host's values; pixels that
    entered with alpha 0 are graded undivided (OIIO's colorconvert), all four channels as the chain without
    --unpremult gives them, on both."""
    img = ref.hdr_image((*SHAPE, 4), seed=12, nonfinite=True)
    img[..., 3] = np.random.default_rng(12).choice([0.0, 1.0, 0.25, 0.7, 0.003], SHAPE).astype(np.float32)
    ops = unpremultiplied(_chain(4, alpha_matrix))
    want, got = (_chain_on(backend, img, ops, True) for backend in (cpu_backend, each_accelerator))
    assert_close(got, want, rtol=RTOL, scale=float(np.nanmax(np.abs(want[np.isfinite(want)]))), atol=FLT_MIN,
                 inputs=img, what="unpremultiplied colour chain")
    zero = img[..., 3] == 0
    for backend, out in ((cpu_backend, want), (each_accelerator, got)):
        plain = _chain_on(backend, img, _chain(4, alpha_matrix), True)
        assert_bits_equal(out[zero], plain[zero], "alpha-0 pixels, graded undivided")


# --- resize and blur -----------------------------------------------------------------------------------

# name -> (src width, src height, dst width, dst height)
RESIZES = {
    "down_noninteger": (97, 61, 41, 29),
    "up_noninteger": (37, 23, 89, 50),
    "up_x_down_y": (64, 48, 101, 30),
    "one_pixel_wide": (1, 40, 3, 17),
    "seven_by_three": (7, 3, 16, 5),
}


@pytest.mark.parametrize("channels", ["rgb", "rgba"])
@pytest.mark.parametrize("case", RESIZES)
@pytest.mark.parametrize("filter_name", list(ref.FILTERS))
def test_resize_matches_the_host(each_accelerator, cpu_backend, filter_name, case, channels):
    sw, sh, dw, dh = RESIZES[case]
    img = ref.hdr_image((sh, sw, CHANNELS[channels]), seed=sw + sh)
    wy, _ = ref.resize_weights(sh, dh, filter_name)
    wx, _ = ref.resize_weights(sw, dw, filter_name)
    _spatial_parity(each_accelerator, cpu_backend, img, "resize", Resize(dw, dh, filter_name), (dh, dw), wy, wx)


@pytest.mark.parametrize("channels", [1, 3, 4, 5])
@pytest.mark.parametrize("filter_name", ["lanczos3", "box"])
def test_resize_nan_inf_positions_match_the_host(each_accelerator, cpu_backend, filter_name, channels):
    img = ref.hdr_image((29, 41, channels), seed=17, nonfinite=True)
    for dw, dh in ((17, 13), (60, 31)):
        wy, _ = ref.resize_weights(29, dh, filter_name)
        wx, _ = ref.resize_weights(41, dw, filter_name)
        _spatial_parity(each_accelerator, cpu_backend, img, "resize", Resize(dw, dh, filter_name), (dh, dw), wy, wx)


BLURS = {
    "sigma0.4": (0.4, (23, 37)),
    "sigma1.5": (1.5, (23, 37)),
    "sigma4": (4.0, (23, 37)),
    "kernel_larger_than_image": (10.0, (3, 7)),
    "one_row": (2.0, (1, 40)),
}


@pytest.mark.parametrize("nonfinite", [False, True], ids=["finite", "nan_inf"])
@pytest.mark.parametrize("channels", ["rgb", "rgba"])
@pytest.mark.parametrize("case", BLURS)
def test_blur_matches_the_host(each_accelerator, cpu_backend, case, channels, nonfinite):
    sigma, (h, w) = BLURS[case]
    img = ref.hdr_image((h, w, CHANNELS[channels]), seed=h * w, nonfinite=nonfinite)
    wy, _ = ref.blur_weights(h, sigma)
    wx, _ = ref.blur_weights(w, sigma)
    _spatial_parity(each_accelerator, cpu_backend, img, "blur", Blur(sigma), (h, w), wy, wx)


# --- place (the pad and crop of --fit pad/fill) ----------------------------------------------------------

PLACES = {
    "pad_all_sides": Place(50, 40, 5, 7),
    "crop_all_sides": Place(20, 10, -5, -7),
    "crop_x_pad_y": Place(30, 41, -3, 11),
    "source_outside_box": Place(3, 3, 100, -50),
}


@pytest.mark.parametrize("channels", [1, 3, 4, 5])
@pytest.mark.parametrize("case", PLACES)
def test_place_equals_the_host_bit_for_bit(each_accelerator, cpu_backend, case, channels):
    """Copies and zeros only: NaN payloads, ±Inf and signed values arrive unchanged."""
    img = ref.hdr_image((23, 37, channels), seed=channels, nonfinite=True)
    op = PLACES[case]
    want = run_spatial(cpu_backend, img, "place", op, (op.height, op.width))
    got = run_spatial(each_accelerator, img, "place", op, (op.height, op.width))
    assert_bits_equal(got, want, f"{each_accelerator.name} place {op}")
