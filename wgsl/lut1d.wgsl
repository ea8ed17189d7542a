// lut1d.wgsl: per-channel 1D LUT with linear interpolation; index clamped to the table, NaN to its start.
#include "common.wgsl"
#include "pixels.wgsl"

struct Params {
    dmin: vec4<f32>,
    scale: vec4<f32>,  // (N - 1) / (domain max - domain min), per channel
    last: u32,         // N - 1
};
@group(0) @binding(1) var<uniform> prm: Params;
@group(0) @binding(2) var<storage, read> table: array<f32>;  // N rows of (r, g, b)

fn lookup(x: f32, c: u32) -> f32 {
    let i = lut_index(x, prm.dmin[c], prm.scale[c], f32(prm.last));
    let i0 = u32(floor(i));
    let i1 = min(i0 + 1u, prm.last);
    let f = i - f32(i0);
    let a = table[i0 * 3u + c];
    let b = table[i1 * 3u + c];
    return a + f * (b - a);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let p = thread_index(wid, nwg, lid);
    if (p >= pixel_count()) {
        return;
    }
    let px = load_px(p);
    store_px(p, vec4<f32>(lookup(px.x, 0u), lookup(px.y, 1u), lookup(px.z, 2u), px.w), false);
}
