// lut1d.wgsl: per-channel 1D LUT with linear interpolation, as OCIO's Lut1D; params[o..o+6] = domain
// minimum RGB and index scale (N - 1) / (max - min) RGB; tables[to..] holds N rows of RGB. Included by
// color.wgsl.
#include "program.wgsl"

fn lut1d_channel(x: f32, c: u32, o: u32, to: u32, n: u32) -> f32 {
    let i = lut_index(x, params[o + c], params[o + 3u + c], f32(n - 1u));
    let i0 = u32(i);
    let i1 = min(i0 + 1u, n - 1u);
    let a = table(to + i0 * 3u + c);
    return a + (i - f32(i0)) * (table(to + i1 * 3u + c) - a);
}

fn lut1d(v: vec3<f32>, o: u32, to: u32, n: u32) -> vec3<f32> {
    return vec3<f32>(lut1d_channel(v.x, 0u, o, to, n), lut1d_channel(v.y, 1u, o, to, n),
                     lut1d_channel(v.z, 2u, o, to, n));
}
