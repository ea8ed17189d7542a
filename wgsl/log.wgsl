// log.wgsl: log encodings as OpenColorIO's Log renderers, both directions, with LogCamera's linear
// segment when params[o] != 0. Encoding fields (three channels each, after the flag): lin slope, lin
// offset, log scale, log offset, lin-side break, line slope, line offset. Decoding fields: -log offset,
// exp2 scale, -lin offset, 1 / lin slope, log-side break, 1 / line slope, -line offset. Included by
// color.wgsl.
#include "program.wgsl"
#include "mathf.wgsl"

fn lin_to_log_channel(x: f32, o: u32, c: u32) -> f32 {
    if (params[o] != 0.0 && x < params[o + 13u + c]) {
        return unfused_mul(params[o + 16u + c], x) + params[o + 19u + c];
    }
    var v = unfused_mul(x, params[o + 1u + c]) + params[o + 4u + c];
    // std::max(FLT_MIN, v): negatives and NaN floor at FLT_MIN.
    if (!(v > FLT_MIN)) {
        v = FLT_MIN;
    }
    return unfused_mul(log2_f32(v), params[o + 7u + c]) + params[o + 10u + c];
}

fn log_to_lin_channel(x: f32, o: u32, c: u32) -> f32 {
    if (params[o] != 0.0 && x < params[o + 13u + c]) {
        return params[o + 16u + c] * (x + params[o + 19u + c]);
    }
    let v = exp2_f32((x + params[o + 1u + c]) * params[o + 4u + c]);
    return (v + params[o + 7u + c]) * params[o + 10u + c];
}

fn lin_to_log(v: vec3<f32>, o: u32) -> vec3<f32> {
    return vec3<f32>(lin_to_log_channel(v.x, o, 0u), lin_to_log_channel(v.y, o, 1u), lin_to_log_channel(v.z, o, 2u));
}

fn log_to_lin(v: vec3<f32>, o: u32) -> vec3<f32> {
    return vec3<f32>(log_to_lin_channel(v.x, o, 0u), log_to_lin_channel(v.y, o, 1u), log_to_lin_channel(v.z, o, 2u));
}
