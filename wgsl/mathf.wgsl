// mathf.wgsl: exp2, log2 and pow accurate to a few float32 ulps, NaN and Inf as C's powf/exp2f/log2f.
// WGSL leaves their accuracy and special values to the driver (lavapipe's pow(NaN, y) is 0, its exp2 and
// log2 are good to ~1e-5 relative): OCIO's CPU results need better.
#include "common.wgsl"

const LN2: f32 = 0.693147180559945;
const LOG2E: f32 = 1.44269504088896;
const SQRT2: f32 = 1.41421356237310;

fn exp2_f32(y: f32) -> f32 {
    if (is_nan(y)) {
        return y;
    }
    if (y >= 128.0) {
        return bitcast<f32>(0x7f800000u);
    }
    if (y < -150.0) {
        return 0.0;
    }
    let n = round(y);
    let r = (y - n) * LN2;  // y - n is exact; |r| <= 0.347
    // e^r by its Taylor series to r^7 (truncation below 1e-8 relative).
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (0.16666667 + r * (0.041666668 + r * (0.008333334
        + r * (0.0013888889 + r * 0.0001984127))))));
    // 2^n in two factors, each a normal float for every n in [-150, 128] (2^128 itself is not a float32).
    let k = i32(n);
    let k1 = k / 2;
    return p * bitcast<f32>(u32(k1 + 127) << 23u) * bitcast<f32>(u32(k - k1 + 127) << 23u);
}

// log2 of a positive, finite x as (its exponent, log2 of its mantissa in [sqrt(1/2), sqrt(2)]): kept apart,
// the exponent stays exact where pow multiplies it by y.
fn log2_parts(x: f32) -> vec2<f32> {
    var v = x;
    var e = 0;
    if (v < 1.17549435e-38) {  // subnormal: make it normal first
        v = v * 8388608.0;
        e = -23;
    }
    let bits = bitcast<u32>(v);
    e += i32((bits >> 23u) & 0xffu) - 127;
    var m = bitcast<f32>((bits & 0x7fffffu) | 0x3f800000u);
    if (m > SQRT2) {
        m = m * 0.5;
        e += 1;
    }
    // ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: the odd series to s^11.
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let ln_m = 2.0 * s * (1.0 + z * (0.33333334 + z * (0.2 + z * (0.14285715 + z * (0.11111111 + z * 0.09090909)))));
    return vec2<f32>(f32(e), ln_m * LOG2E);
}

fn log2_f32(x: f32) -> f32 {
    if (is_nan(x) || x < 0.0) {
        return bitcast<f32>(0x7fc00000u);
    }
    if (x == 0.0) {
        return bitcast<f32>(0xff800000u);
    }
    if (x == bitcast<f32>(0x7f800000u)) {
        return x;
    }
    let parts = log2_parts(x);
    return parts.x + parts.y;
}

// x ** y for the curves' arguments (x >= 0, NaN or +Inf); a negative x gives NaN, as powf does for a
// non-integer exponent. Close to C's powf: rounding log2(x) to float32 as a whole would cost an absolute error
// of ulp(exponent), up to ~1e-6 relative after exp2 (magnified where a display channel is the difference of
// large terms, as in ACES 2.0). So y splits into 12 + 12 bits, y_hi * exponent is exact, and only small
// terms are rounded.
fn pow_f32(x: f32, y: f32) -> f32 {
    if (y == 0.0) {
        return 1.0;
    }
    if (is_nan(x) || is_nan(y) || x < 0.0) {
        return bitcast<f32>(0x7fc00000u);
    }
    if (x == 0.0 || x == bitcast<f32>(0x7f800000u)) {
        return exp2_f32(y * log2_f32(x));  // C's special values
    }
    let parts = log2_parts(x);
    let y_hi = bitcast<f32>(bitcast<u32>(y) & 0xfffff000u);
    let whole = y_hi * parts.x;  // exact: 12 significant bits times at most 8
    let n = round(whole);
    let r = (whole - n) + ((y - y_hi) * parts.x + y * parts.y);
    let k = i32(n);
    let k1 = clamp(k / 2, -126, 127);
    let k2 = clamp(k - k1, -126, 127);
    return exp2_f32(r) * bitcast<f32>(u32(k1 + 127) << 23u) * bitcast<f32>(u32(k2 + 127) << 23u);
}
