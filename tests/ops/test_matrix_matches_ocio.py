"""Colour matrices (3x3, 3x4, 4x4 + offsets) on each backend against OpenColorIO's MatrixTransform."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.ops import Matrix
from tests import reference as ref
from tests.ops.harness import (
    FLT_MIN,
    assert_bits_equal,
    assert_close,
    assert_separate_destination_matches_in_place,
    ocio_apply,
    ocio_cpu,
    run_color,
)

# |oxi - ocio| <= 1e-6 * max(|ocio|, Σ|m·v| + |offset|) + FLT_MIN: a float32 dot product rounds each term,
# so its error scales with the terms, not with a sum that cancelled; 1e-6 is ~17 roundings of that.
RTOL = 1e-6
SHAPE = (48, 64)


def _dense(n: int, seed: int) -> list[float]:
    # Dense (no zero coefficient), negatives off the diagonal as in real gamut conversions.
    rng = np.random.default_rng(seed)
    m = rng.uniform(-0.4, 0.4, {9: (3, 3), 12: (3, 4), 16: (4, 4)}[n])
    m[np.abs(m) < 0.01] = 0.05
    for i in range(min(m.shape)):
        m[i, i] += 1.0
    return m.ravel().tolist()


# name -> (values for Matrix.from_values, extra offset or None)
MATRICES = {
    "3x3": (_dense(9, 1), None),
    "3x3_offset": (_dense(9, 2), (0.01, -0.02, 0.03)),
    # A real-world shape: zero coefficients. 0 * Inf is NaN in OCIO (IEEE), and must be here too.
    "3x3_with_zeros": ([0.6, 0.3, 0.1, 0.0, 0.9, 0.1, 0.1, 0.0, 0.9], None),
    "3x4": (_dense(12, 3), None),
    "4x4": (_dense(16, 4), None),
    "4x4_offset": (_dense(16, 5), (0.01, 0.02, -0.03, 0.5)),
    # Diagonal: OCIO scales each channel on its own (no 0 * Inf from another channel), and so must oxi.
    "diagonal": ([20.0, 0, 0, 0, 0.5, 0, 0, 0, 1.5], None),
    "diagonal_offset": ([1.2, 0, 0, 0.01, 0, 1.0, 0, 0.0, 0, 0, 0.8, -0.01], None),
    "4x4_diagonal_alpha": ([1.2, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 0.8, 0, 0, 0, 0, 0.5], (0.01, 0.0, -0.01, 0.1)),
}
FOUR_BY_FOUR = [name for name, (values, _) in MATRICES.items() if len(values) == 16]


def _op(name: str) -> Matrix:
    values, offset = MATRICES[name]
    return Matrix.from_values(values, offset)


def _ocio(op: Matrix) -> OCIO.CPUProcessor:
    t = OCIO.MatrixTransform()
    t.setMatrix(list(op.m))
    t.setOffset(list(op.offset))
    return ocio_cpu(t)


def _scale(op: Matrix, rgba: np.ndarray) -> np.ndarray:
    """Σ|m·v| + |offset| over the coefficients that are not 0: beside an Inf a zero one adds nothing."""
    m = np.abs(op.array)
    with np.errstate(invalid="ignore"):
        terms = np.abs(rgba.astype(np.float64))[..., None, :] * m
    return np.where(m == 0.0, 0.0, terms).sum(axis=-1) + np.abs(np.asarray(op.offset))


@pytest.mark.parametrize("name", MATRICES)
def test_matrix_on_rgb_image_matches_ocio_with_alpha_one(each_backend, name):
    # OCIO's applyRGB takes alpha as 1, which is NOTES §1's rule for images without alpha.
    img = ref.hdr_image((*SHAPE, 3), seed=41, nonfinite=True)
    op = _op(name)
    want = ocio_apply(_ocio(op), img)
    got = run_color(each_backend, img, "matrix", op, False)
    scale = _scale(op, np.concatenate([img, np.ones((*SHAPE, 1), np.float32)], axis=-1))[..., :3]
    assert_close(got, want, rtol=RTOL, scale=scale, atol=FLT_MIN, inputs=img, what=f"{name} on RGB")


@pytest.mark.parametrize("channels", [4, 5], ids=["rgba", "rgba_plus_z"])
@pytest.mark.parametrize("name", FOUR_BY_FOUR)
def test_4x4_matrix_on_rgba_image_matches_ocio_rgba(each_backend, name, channels):
    img = ref.hdr_image((*SHAPE, channels), seed=43, nonfinite=True)
    op = _op(name)
    want = ocio_apply(_ocio(op), img, rgba=True)
    got = run_color(each_backend, img, "matrix", op, True)
    scale = _scale(op, img[..., :4])
    assert_close(got[..., :4], want[..., :4], rtol=RTOL, scale=scale, atol=FLT_MIN, inputs=img, what=name)
    assert_bits_equal(got[..., 4:], img[..., 4:], "channels after alpha must pass through the matrix")


@pytest.mark.parametrize("has_alpha", [True, False], ids=["has_alpha", "alpha_not_flagged"])
@pytest.mark.parametrize("name", [n for n in MATRICES if n not in FOUR_BY_FOUR])
def test_rgb_matrix_on_rgba_image_leaves_alpha_bit_exact(each_backend, name, has_alpha):
    # A 3x3 / 3x4 matrix acts on R, G, B only (NOTES §1). OCIO's 4x4 renderer computes alpha as
    # 0*r + 0*g + 0*b + a, which turns alpha NaN beside an infinite colour; oxi must leave alpha alone.
    img = ref.hdr_image((*SHAPE, 5), seed=47, nonfinite=True)
    op = _op(name)
    assert not op.touches_alpha()
    want = ocio_apply(_ocio(op), img)  # applyRGB: colour from R, G, B (and alpha = 1, times 0) only
    got = run_color(each_backend, img, "matrix", op, has_alpha)
    scale = _scale(op, np.concatenate([img[..., :3], np.ones((*SHAPE, 1), np.float32)], axis=-1))[..., :3]
    assert_close(got[..., :3], want[..., :3], rtol=RTOL, scale=scale, atol=FLT_MIN, inputs=img, what=name)
    assert_bits_equal(got[..., 3:], img[..., 3:], f"alpha and Z must pass through a {name} matrix")


def test_matrix_into_a_separate_destination_matches_in_place(each_backend):
    img = ref.hdr_image((*SHAPE, 5), seed=53, nonfinite=True)
    assert_separate_destination_matches_in_place(each_backend, img, "matrix", _op("4x4_offset"), True)
