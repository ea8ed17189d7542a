// lut1d.wgsl: per-channel 1D LUT with linear interpolation, as OCIO's Lut1D; params[o..o+6] = domain
// minimum RGB and index scale (N - 1) / (max - min) RGB; tables[to..] holds N rows of RGB. Included by
// color.wgsl.
#include "program.wgsl"

fn lut1d_channel(x: f32, c: u32, o: u32, to: u32, n: u32) -> f32 {
    let i = lut_index(x, params[o + c], params[o + 3u + c], f32(n - 1u));
    let i0 = u32(i);
    let i1 = min(i0 + 1u, n - 1u);
    let a = table(to + i0 * 3u + c);
    return a + unfused_mul(i - f32(i0), table(to + i1 * 3u + c) - a);
}

fn lut1d(v: vec3<f32>, o: u32, to: u32, n: u32) -> vec3<f32> {
    return vec3<f32>(lut1d_channel(v.x, 0u, o, to, n), lut1d_channel(v.y, 1u, o, to, n),
                     lut1d_channel(v.z, 2u, o, to, n));
}

// Half-domain 1D LUT (OCIO's inputHalfDomain): tables[to..] holds 65536 rows, one per half bit pattern;
// x is interpolated between the two half values around it. Conversions are done in integers (pack2x16float
// leaves rounding and out-of-range results to the implementation).
const HALF_MAX_BITS: u32 = 0x7bffu;

fn half_bits(x: f32) -> u32 {
    let u = bitcast<u32>(x);
    let sign = (u >> 16u) & 0x8000u;
    let a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) {
        return sign | 0x7c00u | select(0u, ((a >> 13u) & 0x3ffu) | 0x200u, a > 0x7f800000u);
    }
    if (a >= 0x477ff000u) {
        return sign | 0x7c00u;
    }
    if (a < 0x38800000u) {
        // A subnormal half: |x| * 2^24 rounded to an integer (ties to even).
        return sign | u32(round(bitcast<f32>(a) * 16777216.0));
    }
    var h = (((a >> 23u) - 112u) << 10u) | ((a >> 13u) & 0x3ffu);
    let rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) == 1u)) {
        h += 1u;
    }
    return sign | h;
}

fn half_value(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0u) {
        let v = f32(m) * 5.9604644775390625e-08;
        return select(v, -v, sign != 0u);
    }
    if (e == 31u) {
        return bitcast<f32>(sign | 0x7f800000u | (m << 13u));
    }
    return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}

fn lut1d_half_channel(x_in: f32, c: u32, to: u32) -> f32 {
    var x = x_in;
    var h = half_bits(x);
    if ((h & 0x7fffu) == 0x7c00u) {
        h = (h & 0x8000u) | HALF_MAX_BITS;
        x = half_value(h);
    }
    var ha = h;
    var hb = h + 1u;
    if (abs(half_value(h)) > abs(x)) {
        hb = h;
        ha = h - 1u;
    } else if ((hb & 0x7fffu) == 0x7c00u) {
        hb = (hb & 0x8000u) | HALF_MAX_BITS;
        x = half_value(hb);
    }
    let fa = half_value(ha);
    var frac = (x - fa) / (half_value(hb) - fa);
    if (is_nan(frac)) {
        frac = 0.0;
    }
    let va = table(to + ha * 3u + c);
    let vb = table(to + hb * 3u + c);
    return unfused_mul(va - vb, 1.0 - frac) + vb;
}

fn lut1d_half(v: vec3<f32>, to: u32) -> vec3<f32> {
    return vec3<f32>(lut1d_half_channel(v.x, 0u, to), lut1d_half_channel(v.y, 1u, to),
                     lut1d_half_channel(v.z, 2u, to));
}
