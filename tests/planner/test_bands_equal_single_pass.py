"""Bands and tiles under tiny forced limits give what one pass gives: colour ops and place bit for bit, resize and
blur within 1e-6 at every seam (in practice bit for bit too), NaN and ±Inf in the same places, on both backends."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.io.common import ImageSpec
from oxi_cli.ops import Blur, Cdl, Lut1d, Lut3d, Matrix, Place, Resize
from oxi_cli.ops.premult import unpremultiplied
from oxi_cli.ops.resize import displayed_resize
from oxi_cli.plan import make_plan
from oxi_cli.stream import run_in_memory
from tests.planner.conftest import plate

_rng = np.random.default_rng(42)
COLOUR = {
    "cdl": [Cdl(slope=(1.1, 0.9, 1.3), offset=(0.01, -0.02, 0.0), power=(1.2, 0.9, 1.0), sat=0.8)],
    "matrix": [Matrix.from_values([0.9, 0.1, 0, 0.05, 0.1, 0.8, 0.1, 0, 0, 0.2, 0.8, 0, 0, 0, 0.1, 0.9])],
    "lut1d": [Lut1d(_rng.uniform(-0.5, 4.0, (1024, 3)).astype(np.float32), (-0.1,) * 3, (8.0,) * 3)],
    "lut3d": [Lut3d(_rng.uniform(-0.5, 2.0, (17, 17, 17, 3)).astype(np.float32))],
}
# --unpremult: each colour run between an unpremultiply and a re-premultiply by the plate's alpha.
COLOUR["unpremultiplied"] = unpremultiplied([*COLOUR["cdl"], *COLOUR["lut3d"]])
SPATIAL = {
    "blur": [Blur(2.5)],
    "resize": [Resize(519, 259, "lanczos3")],  # 777 -> 259 rows is 3:1; 1031 -> 519 columns has no short period
    "chain": [COLOUR["cdl"][0], Blur(1.5), Resize(687, 518, "catmull-rom")],  # 777 -> 518 rows is 3:2
    "unpremultiplied_chain": unpremultiplied([COLOUR["cdl"][0], Resize(687, 518, "catmull-rom"), *COLOUR["lut3d"]]),
    # the chains of --fit pad (bars on every side) and --fit fill (overflow cut on every side)
    "fit_pad": [Resize(640, 482, "lanczos3", frame=(700, 560, 30, 39)), Place(700, 560, 30, 39)],
    "fill_crop": [Resize(745, 561, "lanczos3", frame=(700, 500, -22, -30)), Place(700, 500, -22, -30)],
    # the plate as a data window inside a larger display window (black around it), and past a smaller one
    "windowed_resize": [displayed_resize(((101, 53, 1031, 777), (0, 0, 1400, 1000)), (560, 400), "lanczos3")],
    "windowed_blur": [Blur(2.5).bound(((101, 53, 1031, 777), (0, 0, 1200, 900)))],
    "overscan_blur_kept": [Blur(2.5, keep=True).bound(((0, -20, 1031, 777), (3, 0, 1020, 700)))],
}
# Place alone (padding one axis while it crops the other), and after a colour op.
PLACED = {
    "pad_x_crop_y": [Place(1100, 700, 40, -50)],
    "cdl_then_crop_x_pad_y": [COLOUR["cdl"][0], Place(1000, 800, -16, 11)],
}
# name -> (force, RAM budget, device budget): tiny enough that a 1031x777 plate needs several pieces.
LIMITS = {"streaming": (8 << 20, None), "tiled": (64 << 20, 4 << 20)}


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def _planned(ops, image, backend, force):
    spec = ImageSpec(image.width, image.height, image.channels, image.meta)
    ram, vram = LIMITS[force]
    plan = make_plan(spec, ops, backend.limits(), ram, vram, force, runtime=0)
    assert plan.count > 1, "the limits must split the image, or there is no seam to test"
    return plan, run_in_memory(ops, image, backend, plan, out_type="float")


def _single(ops, image, backend):
    spec = ImageSpec(image.width, image.height, image.channels, image.meta)
    plan = make_plan(spec, ops, backend.limits(), 1 << 40, 1 << 40, "single", runtime=0)
    return run_in_memory(ops, image, backend, plan, out_type="float")


@pytest.fixture(scope="module")
def image():
    return plate()


@pytest.mark.parametrize("force", sorted(LIMITS))
@pytest.mark.parametrize("name", sorted(COLOUR))
def test_colour_ops_in_pieces_are_bit_identical(backend, image, name: str, force: str):
    ops = COLOUR[name]
    want = _single(ops, image, backend)
    _, got = _planned(ops, image, backend, force)
    assert sorted(got.planes) == sorted(want.planes)
    for channel, plane in want.planes.items():
        np.testing.assert_array_equal(_bits(got.planes[channel]), _bits(plane), err_msg=f"{name} {channel}")


@pytest.mark.parametrize("force", sorted(LIMITS))
@pytest.mark.parametrize("name", sorted(SPATIAL))
def test_resize_and_blur_in_pieces_match_within_1e6_at_every_seam(backend, image, name: str, force: str):
    ops = SPATIAL[name]
    want = _single(ops, image, backend)
    plan, got = _planned(ops, image, backend, force)
    assert (got.width, got.height) == (want.width, want.height) == (plan.out_width, plan.out_height)
    assert got.meta.windows == want.meta.windows
    for channel, plane in want.planes.items():
        g = got.planes[channel].astype(np.float64)
        w = plane.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{name} {channel}: NaN positions")
        finite = np.isfinite(w)
        np.testing.assert_array_equal(g[~finite & ~np.isnan(w)], w[~finite & ~np.isnan(w)])
        err = np.abs(g[finite] - w[finite]) / np.maximum(1.0, np.abs(w[finite]))
        assert err.max(initial=0.0) <= 1e-6, f"{name} {channel} ({plan.count} {force} pieces): {err.max():.3g}"


def test_pass_through_channels_are_untouched_by_a_streamed_colour_chain(cpu_backend, image):
    plan, got = _planned(COLOUR["cdl"], image, cpu_backend, "streaming")
    np.testing.assert_array_equal(_bits(got.planes["Z"]), _bits(image.planes["Z"]))
    np.testing.assert_array_equal(got.planes["id"], image.planes["id"].astype(np.float32))  # --out-type float


@pytest.mark.parametrize("force", sorted(LIMITS))
@pytest.mark.parametrize("name", sorted(PLACED))
def test_pad_and_crop_in_pieces_are_bit_identical(backend, image, name: str, force: str):
    ops = PLACED[name]
    want = _single(ops, image, backend)
    plan, got = _planned(ops, image, backend, force)
    assert (got.width, got.height) == (want.width, want.height) == (plan.out_width, plan.out_height)
    assert got.meta.windows == want.meta.windows
    for channel, plane in want.planes.items():
        np.testing.assert_array_equal(_bits(got.planes[channel]), _bits(plane), err_msg=f"{name} {channel}")
