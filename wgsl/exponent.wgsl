// exponent.wgsl: power curves as OpenColorIO's Gamma renderers. exponent: params[o] = negative style
// (0 clamp, 1 mirror, 2 pass), params[o+1..o+4] = exponent RGB. moncurve (ExponentWithLinear): params[o] =
// mirror flag, then five fields of three channels: power, offset, break point, line slope, scale.
// Included by color.wgsl.
#include "program.wgsl"
#include "mathf.wgsl"

fn exponent_channel(x: f32, g: f32, style: u32) -> f32 {
    if (style == 0u) {
        // max(0, x) first: NaN becomes 0, as std::max(0, NaN) does.
        var v = 0.0;
        if (x > 0.0) {
            v = x;
        }
        return pow_f32(v, g);
    }
    if (style == 1u) {
        let v = pow_f32(abs(x), g);
        return select(v, -v, x < 0.0);
    }
    return select(x, pow_f32(x, g), x > 0.0);
}

fn exponent(v: vec3<f32>, o: u32) -> vec3<f32> {
    let style = u32(params[o]);
    return vec3<f32>(exponent_channel(v.x, params[o + 1u], style), exponent_channel(v.y, params[o + 2u], style),
                     exponent_channel(v.z, params[o + 3u], style));
}

fn moncurve_channel(x: f32, o: u32, c: u32, forward: bool) -> f32 {
    let gamma = params[o + 1u + c];
    let off = params[o + 4u + c];
    let brk = params[o + 7u + c];
    let slope = params[o + 10u + c];
    let scale = params[o + 13u + c];
    let mirror = params[o] != 0.0;
    let a = select(x, abs(x), mirror);
    var v: f32;
    if (a <= brk) {
        v = a * slope;
    } else if (forward) {
        v = pow_f32(unfused_mul(a, scale) + off, gamma);
    } else {
        v = unfused_mul(pow_f32(a, gamma), scale) - off;
    }
    return select(v, -v, mirror && x < 0.0);
}

fn moncurve(v: vec3<f32>, o: u32, forward: bool) -> vec3<f32> {
    return vec3<f32>(moncurve_channel(v.x, o, 0u, forward), moncurve_channel(v.y, o, 1u, forward),
                     moncurve_channel(v.z, o, 2u, forward));
}
