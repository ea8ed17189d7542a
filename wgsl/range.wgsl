// range.wgsl: OpenColorIO's Range renderers: in * scale + offset, then std::max(lower, t) and
// std::min(upper, t) where those bounds exist (NaN becomes the bound). params[o..o+6] = scale, offset,
// lower, upper, has lower, has upper. Included by color.wgsl.
#include "program.wgsl"

fn range_channel(x: f32, o: u32) -> f32 {
    var t = unfused_mul(x, params[o]) + params[o + 1u];
    if (params[o + 4u] != 0.0 && !(params[o + 2u] < t)) {
        t = params[o + 2u];
    }
    if (params[o + 5u] != 0.0 && !(t < params[o + 3u])) {
        t = params[o + 3u];
    }
    return t;
}

fn range_clamp(v: vec3<f32>, o: u32) -> vec3<f32> {
    return vec3<f32>(range_channel(v.x, o), range_channel(v.y, o), range_channel(v.z, o));
}
