// cdl.wgsl: ASC CDL as OpenColorIO's CDLTransform, both styles; params[o..o+10] = slope RGB, offset RGB,
// power RGB, saturation (ops.program's layout). Included by color.wgsl.
#include "program.wgsl"

const LUMA = vec3<f32>(0.2126, 0.7152, 0.0722);

fn cdl_slope_offset(v: vec3<f32>, o: u32) -> vec3<f32> {
    let slope = vec3<f32>(params[o], params[o + 1u], params[o + 2u]);
    let offset = vec3<f32>(params[o + 3u], params[o + 4u], params[o + 5u]);
    // As OCIO's renderer: a NaN after slope and offset counts as 0 (both styles). An infinite channel goes
    // through; in `noclamp` the saturation step then makes Inf - Inf, so the whole pixel turns NaN.
    var s = unfused_mul3(v, slope) + offset;
    for (var c = 0u; c < 3u; c++) {
        if (is_nan(s[c])) {
            s[c] = 0.0;
        }
    }
    return s;
}

fn cdl_power_sat(v: vec3<f32>, o: u32) -> vec3<f32> {
    let power = vec3<f32>(params[o + 6u], params[o + 7u], params[o + 8u]);
    // Power only where v > 0: zero and negatives pass unchanged.
    let p = select(v, pow(v, power), v > vec3<f32>(0.0));
    let l = unfused_mul(p.x, LUMA.x) + unfused_mul(p.y, LUMA.y) + unfused_mul(p.z, LUMA.z);
    return l + unfused_mul3(vec3<f32>(params[o + 9u]), p - l);
}

fn clamp01(v: vec3<f32>) -> vec3<f32> {
    return min(max(v, vec3<f32>(0.0)), vec3<f32>(1.0));
}

// `noclamp` (OCIO CDL_NO_CLAMP): nothing is clamped.
fn cdl_noclamp(v: vec3<f32>, o: u32) -> vec3<f32> {
    return cdl_power_sat(cdl_slope_offset(v, o), o);
}

// `asc` (ASC v1.2): clamped to [0, 1] after slope/offset and after saturation.
fn cdl_asc(v: vec3<f32>, o: u32) -> vec3<f32> {
    return clamp01(cdl_power_sat(clamp01(cdl_slope_offset(v, o)), o));
}
