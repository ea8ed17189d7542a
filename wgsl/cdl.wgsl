// cdl.wgsl: ASC CDL as OpenColorIO's CDLTransform; CLAMP selects the `asc` style, else `noclamp`.
#include "common.wgsl"
#include "pixels.wgsl"

struct Params {
    slope: vec4<f32>,
    offset: vec4<f32>,
    power: vec4<f32>,
    sat: vec4<f32>,
};
@group(0) @binding(1) var<uniform> prm: Params;

const LUMA = vec3<f32>(0.2126, 0.7152, 0.0722);

// As OCIO's renderer: a NaN after slope and offset counts as 0 (both styles). An infinite channel then
// goes through; in `noclamp` the saturation step makes it Inf - Inf, so the whole pixel turns NaN.
fn nan_to_zero(v: vec3<f32>) -> vec3<f32> {
    var o = v;
    for (var c = 0u; c < 3u; c++) {
        if (is_nan(v[c])) {
            o[c] = 0.0;
        }
    }
    return o;
}

fn clamp01(v: vec3<f32>) -> vec3<f32> {
    return min(max(v, vec3<f32>(0.0)), vec3<f32>(1.0));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let p = thread_index(wid, nwg, lid);
    if (p >= pixel_count()) {
        return;
    }
    let px = load_px(p);
    var v = nan_to_zero(px.xyz * prm.slope.xyz + prm.offset.xyz);
$$ if CLAMP
    v = clamp01(v);
$$ endif
    // Power applies only where v > 0; zero and negatives pass unchanged.
    v = select(v, pow(v, prm.power.xyz), v > vec3<f32>(0.0));
    let l = v.x * LUMA.x + v.y * LUMA.y + v.z * LUMA.z;
    v = l + prm.sat.x * (v - l);
$$ if CLAMP
    v = clamp01(v);
$$ endif
    store_px(p, vec4<f32>(v, px.w), false);
}
