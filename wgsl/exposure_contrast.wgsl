// exposure_contrast.wgsl: OCIO's ExposureContrast renderers. params[o] = mode: 0 is in * a + b, 1 is
// max(0, in * a) ** b * c (NaN clamps to 0, as std::max(0, NaN)); params[o+1..o+4] = a, b, c. Included by
// color.wgsl.
#include "program.wgsl"
#include "mathf.wgsl"

fn exposure_contrast_channel(x: f32, o: u32) -> f32 {
    if (params[o] == 0.0) {
        return unfused_mul(x, params[o + 1u]) + params[o + 2u];
    }
    var v = 0.0;
    let s = x * params[o + 1u];
    if (s > 0.0) {
        v = s;
    }
    return pow_f32(v, params[o + 2u]) * params[o + 3u];
}

fn exposure_contrast(v: vec3<f32>, o: u32) -> vec3<f32> {
    return vec3<f32>(exposure_contrast_channel(v.x, o), exposure_contrast_channel(v.y, o),
                     exposure_contrast_channel(v.z, o));
}
