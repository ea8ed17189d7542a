// matrix.wgsl: out = M . [r, g, b, a] + offset, column-vector convention (as OCIO); params[o..o+16] is M
// row-major, params[o+16..o+20] the offset (ops.program's layout). Included by color.wgsl.
#include "program.wgsl"

fn matrix_row(o: u32, i: u32, x: vec4<f32>) -> f32 {
    let m = o + 4u * i;
    return params[m] * x.x + params[m + 1u] * x.y + params[m + 2u] * x.z + params[m + 3u] * x.w
        + params[o + 16u + i];
}

// No alpha read: the fourth column acts on a constant 1 (an image without alpha, or a matrix whose alpha
// row and column are the identity, so a NaN/Inf alpha never meets a zero coefficient).
fn matrix_rgb(v: vec3<f32>, o: u32) -> vec3<f32> {
    let x = vec4<f32>(v, 1.0);
    return vec3<f32>(matrix_row(o, 0u, x), matrix_row(o, 1u, x), matrix_row(o, 2u, x));
}

// Alpha read and written through the fourth row and column.
fn matrix_rgba(v: vec4<f32>, o: u32) -> vec4<f32> {
    return vec4<f32>(matrix_row(o, 0u, v), matrix_row(o, 1u, v), matrix_row(o, 2u, v), matrix_row(o, 3u, v));
}
