"""float32 pow as branch-free inline arithmetic, so the loops using it vectorise."""

# A call into libm's powf keeps LLVM from vectorising the loop around it. This works in float64 (four lanes of
# AVX2) from series whose truncation error is below 1e-15 relative and rounds once to float32: float64 pow
# rounded once, bar 22-37 of 2**31 arguments (all below 1e-9, at gamma 2.2 and 2.4 and their inverses) and exact
# halfway results of integer powers, an ulp off (glibc 2.36's powf misses about 1 in 1500). Special cases
# are selects, never branches. log2 and exp2 are compiled once and inlined by LLVM; pow_f32 itself is too big
# for LLVM's inliner (a call left in the loop), so Numba inlines it.

# isort: off
from oxi_cli.jit import helper, helper_inline  # first: it imports Numba without SciPy and coverage

# isort: on
import numpy as np

from oxi_cli.backends.cpu.kernels.half import bits_double, bits_float, double_bits, float_bits

F, D, U32 = np.float32, np.float64, np.uint32
SQRT2 = D(1.4142135623730951)
LN2 = D(0.6931471805599453)
# Adding then subtracting 1.5 * 2**52 rounds a double below 2**51 to an integer; the sum's low bits hold it.
ROUNDER = D(6755399441055744.0)
# 2**23 + e as a float32 whose mantissa bits are e: the exponent field as a number without an int conversion.
EXP_FLOAT = F(8388608.0)
TWO_23 = F(8388608.0)
SMALLEST_NORMAL = F(2.0**-126)
F32_NAN, F32_INF, F32_ZERO = F(np.nan), F(np.inf), F(0.0)
# exp2's argument is clamped here: beyond it the float32 result is 0 or Inf either way.
EXP2_LIMIT = D(200.0)


@helper
def _log2(x):
    """log2 of a positive, finite float32 (denormals included) as a double; any other x gives a finite value."""
    tiny = x < SMALLEST_NORMAL
    bits = float_bits(x * TWO_23 if tiny else x)
    e = bits_float((bits >> U32(23)) & U32(0xFF) | U32(0x4B000000)) - EXP_FLOAT  # exponent field, exact
    m = D(bits_float((bits & U32(0x7FFFFF)) | U32(0x3F800000)))  # mantissa in [1, 2)
    big = m > SQRT2
    m = m * D(0.5) if big else m
    e = D(e) + (D(1.0) if big else D(0.0)) - (D(150.0) if tiny else D(127.0))
    # log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the series to s**17 is exact to 1e-16.
    s = (m - D(1.0)) / (m + D(1.0))
    s2 = s * s
    series = D(1.0) + s2 * (D(1 / 3) + s2 * (D(1 / 5) + s2 * (D(1 / 7) + s2 * (D(1 / 9) + s2 * (
        D(1 / 11) + s2 * (D(1 / 13) + s2 * (D(1 / 15) + s2 * D(1 / 17))))))))
    return e + s * series * D(2.0 / 0.6931471805599453)


@helper
def _exp2(z):
    """2**z for a double z, clamped to +-200 (then 0 or Inf as float32): 2**round(z) exactly, e**r the rest."""
    z = min(max(z, -EXP2_LIMIT), EXP2_LIMIT)
    shifted = z + ROUNDER
    n = shifted - ROUNDER
    r = (z - n) * LN2  # |r| <= 0.347: the series to r**12 is exact to 2e-16
    p = D(1.0) + r * (D(1.0) + r * (D(1 / 2) + r * (D(1 / 6) + r * (D(1 / 24) + r * (D(1 / 120) + r * (
        D(1 / 720) + r * (D(1 / 5040) + r * (D(1 / 40320) + r * (D(1 / 362880) + r * (
            D(1 / 3628800) + r * (D(1 / 39916800) + r * D(1 / 479001600))))))))))))
    # The low bits of `shifted` are n; plus the bias, shifted to the exponent field, they are 2**n.
    return p * bits_double((double_bits(shifted) + 1023) << 52)


@helper_inline
def pow_f32(x, y):
    """powf(x, y) for float32 x and a positive float32 y that is not an integer: NaN for NaN and x < 0 but
    -Inf, 0 for +-0, Inf for +-Inf."""
    out = F(_exp2(D(y) * _log2(x)))
    out = x if (x == F32_ZERO) | (x == F32_INF) else out  # +-0 ** y is +0: x + 0 drops the sign
    out = out + F32_ZERO
    return out if x >= F32_ZERO else (F32_INF if x == -F32_INF else F32_NAN)


QUIET_BIT = U32(0x400000)  # of a float32 NaN


@helper_inline
def pow_nonneg_f32(x, y):
    """powf(x, y) for float32 x that is +0, positive or NaN (-0 is taken as +0, a negative gives NaN) and any
    finite float32 y: pow_f32 with C's answers for y <= 0 and integer y too: Inf for 0 ** -y, 0 for Inf ** -y,
    and 1 for x ** 0 but a signalling NaN's (glibc's powf, so OCIO's CPU renderers, return that NaN). Rounded as
    pow_f32: 1 ULP off for ~30 of the 2**31 positive x at gamma 2.2 or 2.4 and their inverses (all x < 1e-9,
    against float64 pow rounded once), and either way at exact halfway results (4097.0 ** 2)."""
    out = pow_f32(x, y)
    flipped = F32_INF if x == F32_ZERO else F32_ZERO
    out = flipped if (y < F32_ZERO) & ((x == F32_ZERO) | (x == F32_INF)) else out
    signalling = (x != x) & ((float_bits(x) & QUIET_BIT) == U32(0))
    return F(1.0) if (y == F32_ZERO) & ~signalling else out


@helper_inline
def log2_f32(x):
    """log2f(x) correctly rounded (one rounding of _log2's double; float64 log2 rounded once agrees for every
    positive float32): -Inf for +-0, Inf for Inf, NaN for NaN and x < 0."""
    out = F(_log2(x))
    out = F32_INF if x == F32_INF else out
    out = -F32_INF if x == F32_ZERO else out
    return out if x >= F32_ZERO else F32_NAN


@helper_inline
def exp2_f32(z):
    """exp2f(z) correctly rounded (one rounding of _exp2's double; float64 exp2 rounded once agrees for every
    float32 in [-151, 129], beyond which it is 0 or Inf): 0 for -Inf, Inf for Inf, NaN for NaN."""
    out = F(_exp2(D(z)))
    return out if z == z else z
