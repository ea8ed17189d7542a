// matrix.wgsl: out = M . [r, g, b, a] + offset, column-vector convention (as OCIO); params[o..o+16] is M
// row-major, params[o+16..o+20] the offset (ops.program's layout). Included by color.wgsl.
#include "program.wgsl"

fn matrix_row(o: u32, i: u32, x: vec4<f32>) -> f32 {
    let m = o + 4u * i;
    return unfused_mul(params[m], x.x) + unfused_mul(params[m + 1u], x.y) + unfused_mul(params[m + 2u], x.z)
        + unfused_mul(params[m + 3u], x.w) + params[o + 16u + i];
}

// No alpha read: the fourth column acts on a constant 1 (an image without alpha, or a matrix whose alpha
// row and column are the identity, so a NaN/Inf alpha never meets a zero coefficient). It joins the offset
// before the sum, in the CPU kernel's (OCIO's) order.
fn matrix_rgb(v: vec3<f32>, o: u32) -> vec3<f32> {
    var out: vec3<f32>;
    for (var i = 0u; i < 3u; i++) {
        let m = o + 4u * i;
        out[i] = unfused_mul(params[m], v.x) + unfused_mul(params[m + 1u], v.y) + unfused_mul(params[m + 2u], v.z)
            + (params[m + 3u] + params[o + 16u + i]);
    }
    return out;
}

// Alpha read and written through the fourth row and column.
fn matrix_rgba(v: vec4<f32>, o: u32) -> vec4<f32> {
    return vec4<f32>(matrix_row(o, 0u, v), matrix_row(o, 1u, v), matrix_row(o, 2u, v), matrix_row(o, 3u, v));
}

// A diagonal matrix, each channel on its own (OCIO's Scale renderers): in * scale + offset, so an Inf in one
// channel never meets another channel's zero coefficient. Alpha is 1 unless the chain carries it.
fn matrix_scale(x: vec4<f32>, o: u32) -> vec4<f32> {
    let scale = vec4<f32>(params[o], params[o + 5u], params[o + 10u], params[o + 15u]);
    let offset = vec4<f32>(params[o + 16u], params[o + 17u], params[o + 18u], params[o + 19u]);
    return unfused_mul4(scale, x) + offset;
}
