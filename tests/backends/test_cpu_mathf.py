"""kernels/mathf.py's inline pow, log2 and exp2 against float64 numpy, rounded once to float32: every finite
float32 bit pattern's neighbourhood sampled, the exponents the ACES 2.0 and Gamma kernels use, and the special
values powf, log2f and exp2f give."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.backends.cpu.kernels.mathf import exp2_f32, log2_f32, pow_f32, pow_nonneg_f32
from oxi_cli.jit import helper

F = np.float32
# cone compression and its inverse, and typical per-view values of 1 / cz, cz, the tone curve's g, 1 / 1.14.
EXPONENTS = (0.42, 1 / 0.42, 0.8695652, 1.15, 1.1404, 0.877193)
D = np.float64
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
    power is SIMD code on AVX-512 hosts (the 16-core host with an H100 GPU) whose denormal results are not
    correctly rounded."""
    got = np.empty_like(SPECIAL)
    _pow_all(SPECIAL, F(y), got)
    with np.errstate(all="ignore"):
        want = np.power(SPECIAL.astype(np.float64), np.float64(F(y))).astype(F)
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got[1]), "-0 ** y is +0"


# sRGB's, Rec.709's and typical gammas both ways; integers, negatives and 0, which only pow_nonneg_f32 takes.
GAMMAS = (2.4, 1 / 2.4, 2.2222, 0.45, 1.0, 2.0, 3.0, -1.5, -2.0, -0.45, 0.0, 100.0, 0.01)
NONNEG = SPECIAL[~(SPECIAL < 0)]


@helper
def _pow_nonneg_all(x, y, out):
    for i in range(x.shape[0]):
        out[i] = pow_nonneg_f32(x[i], y)


@helper
def _log2_all(x, out):
    for i in range(x.shape[0]):
        out[i] = log2_f32(x[i])


@helper
def _exp2_all(x, out):
    for i in range(x.shape[0]):
        out[i] = exp2_f32(x[i])


def _halfway(want: np.ndarray) -> np.ndarray:
    """Where a float64 value lies exactly halfway between two float32 (x ** 2 for x of 13 significant bits,
    257.0 ** 3): a double computation may round those either way, and glibc's powf misses them as often."""
    with np.errstate(over="ignore"):
        near = want.astype(F)
    up, down = (np.nextafter(near, F(s)).astype(D) for s in (np.inf, -np.inf))
    return np.isfinite(want) & ((want == (near.astype(D) + up) / 2) | (want == (near.astype(D) + down) / 2))


@pytest.mark.parametrize("y", GAMMAS)
def test_pow_nonneg_is_correctly_rounded(y):
    x = np.concatenate([NONNEG, _samples(1 << 21, seed=int(abs(y) * 1000) + 1), F(np.linspace(0, 2, 1 << 16))])
    got = np.empty_like(x)
    _pow_nonneg_all(x, F(y), got)
    with np.errstate(all="ignore"):
        want64 = np.power(x.astype(D), D(F(y)))
        want = want64.astype(F)
    keep = ~_halfway(want64)
    assert keep.sum() > x.size * 0.99
    np.testing.assert_array_equal(got[keep], want[keep])


def test_pow_nonneg_of_a_signalling_nan_to_0_is_nan():
    """glibc's powf (so OCIO) gives 1 for x ** 0 but for a signalling NaN; numpy's float64 cast quiets it."""
    x = np.array([0x7FA00000, 0x7FC00000, 0xFFA00000], np.uint32).view(F)  # signalling, quiet, signalling
    got = np.empty_like(x)
    _pow_nonneg_all(x, F(0.0), got)
    assert np.isnan(got[0]) and got[1] == 1.0 and np.isnan(got[2])


def test_log2_is_correctly_rounded():
    bits = np.random.default_rng(7).integers(0, 1 << 32, 1 << 22, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([SPECIAL, bits.view(F), F(np.linspace(0.5, 2.0, 1 << 18))])
    got = np.empty_like(x)
    _log2_all(x, got)
    with np.errstate(all="ignore"):
        want = np.log2(x.astype(D)).astype(F)
    np.testing.assert_array_equal(got, want)


def test_exp2_is_correctly_rounded():
    rng = np.random.default_rng(8)
    bits = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(F)
    # Every binade of |z| up to 2 ** 8, where results are neither 1 nor 0 nor Inf, and the edges of float32's range.
    small = F(np.ldexp(rng.uniform(1, 2, 1 << 22), rng.integers(-30, 8, 1 << 22)) * rng.choice([-1, 1], 1 << 22))
    edges = F(np.concatenate([np.linspace(-151, -125, 1 << 16), np.linspace(127, 129, 1 << 14)]))
    x = np.concatenate([SPECIAL, F([-149.0, -150.0, -149.5, 127.0, 128.0, -126.0]), bits, small, edges])
    got = np.empty_like(x)
    _exp2_all(x, got)
    with np.errstate(all="ignore"):
        want = np.exp2(x.astype(D)).astype(F)
    np.testing.assert_array_equal(got, want)
