// common.wgsl: helpers every oxi compute shader includes (thread indexing, NaN tests).

// Threads per workgroup for every kernel; the host dispatches ceil(n / WG) groups on a 2-D grid
// because one grid dimension stops at 65535 workgroups.
const WG: u32 = 256u;

fn thread_index(wid: vec3<u32>, nwg: vec3<u32>, lid: vec3<u32>) -> u32 {
    return (wid.y * nwg.x + wid.x) * WG + lid.x;
}

// The smallest normal float32 (C's FLT_MIN).
const FLT_MIN: f32 = 1.17549435e-38;

// A bit test, not `x != x`: shader compilers may assume floats are never NaN and fold comparisons.
fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

// LUT index on one axis: clamped to [0, last]; NaN counts as the domain minimum (as OCIO).
fn lut_index(x: f32, dmin: f32, scale: f32, last: f32) -> f32 {
    let i = (x - dmin) * scale;
    if (is_nan(i) || i <= 0.0) {
        return 0.0;
    }
    return min(i, last);
}
