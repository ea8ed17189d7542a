// matrix.wgsl: out = M . [r, g, b, a] + offset (column vector, as OCIO); ALPHA reads and writes channel 3.
#include "common.wgsl"
#include "pixels.wgsl"

struct Params {
    rows: array<vec4<f32>, 4>,
    offset: vec4<f32>,
};
@group(0) @binding(1) var<uniform> prm: Params;

fn row(i: u32, x: vec4<f32>) -> f32 {
    let m = prm.rows[i];
    return m.x * x.x + m.y * x.y + m.z * x.z + m.w * x.w + prm.offset[i];
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let p = thread_index(wid, nwg, lid);
    if (p >= pixel_count()) {
        return;
    }
    let px = load_px(p);
$$ if ALPHA
    let x = px;
    store_px(p, vec4<f32>(row(0u, x), row(1u, x), row(2u, x), row(3u, x)), true);
$$ else
    // No alpha channel: the fourth column acts on a constant 1.
    let x = vec4<f32>(px.xyz, 1.0);
    store_px(p, vec4<f32>(row(0u, x), row(1u, x), row(2u, x), px.w), false);
$$ endif
}
