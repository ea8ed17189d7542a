"""kernels/mathf.py's inline pow against float64 numpy, rounded once to float32: every finite float32 bit
pattern's neighbourhood sampled, the exponents the ACES 2.0 kernel uses, and the special values powf gives."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.backends.cpu.kernels.mathf import pow_f32
from oxi_cli.jit import helper

F = np.float32
# cone compression and its inverse, and typical per-view values of 1 / cz, cz, the tone curve's g, 1 / 1.14.
EXPONENTS = (0.42, 1 / 0.42, 0.8695652, 1.15, 1.1404, 0.877193)
SPECIAL = F([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -1e-30, -1e-45, 1e-45, 1e-40, 1.1754942e-38, 1.0, 3.4e38])


@helper
def _pow_all(x, y, out):
    for i in range(x.shape[0]):
        out[i] = pow_f32(x[i], y)


def _samples(n: int, seed: int) -> np.ndarray:
    """Positive float32 from random bit patterns: every binade equally, denormals included."""
    bits = np.random.default_rng(seed).integers(1, 0x7F800000, n, dtype=np.uint32)
    return bits.view(F)


@pytest.mark.parametrize("y", EXPONENTS)
def test_pow_is_correctly_rounded(y):
    x = np.concatenate([_samples(1 << 21, seed=int(y * 1000)), F(np.linspace(0.5, 2.0, 1 << 16))])
    got = np.empty_like(x)
    _pow_all(x, F(y), got)
    with np.errstate(over="ignore", under="ignore"):
        want = np.power(x.astype(np.float64), np.float64(F(y))).astype(F)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("y", EXPONENTS)
def test_pow_special_values_are_powfs(y):
    """C's pow on zeros, infinities, NaN, negatives and denormals, through float64 as above: numpy's own float32
    power is SIMD code on AVX-512 hosts (the H100 box) whose denormal results are not correctly rounded."""
    got = np.empty_like(SPECIAL)
    _pow_all(SPECIAL, F(y), got)
    with np.errstate(all="ignore"):
        want = np.power(SPECIAL.astype(np.float64), np.float64(F(y))).astype(F)
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got[1]), "-0 ** y is +0"
