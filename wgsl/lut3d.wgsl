// lut3d.wgsl: 3D LUT interpolated by hand in f32 from storage buffers (no texture filtering);
// TETRA picks tetrahedral (OCIO's 6-tetrahedra split), else trilinear.
#include "common.wgsl"
#include "pixels.wgsl"

struct Params {
    dmin: vec4<f32>,
    scale: vec4<f32>,   // (N - 1) / (domain max - domain min), per axis
    n: u32,             // entries per axis
    slab: u32,          // entries per table binding: one binding may hold less than a whole LUT
};
@group(0) @binding(1) var<uniform> prm: Params;
// The table, entry ((r * N + g) * N + b) holding (r, g, b), split over up to four bindings
// because a 256^3 LUT exceeds some devices' 128 MiB binding limit.
@group(0) @binding(2) var<storage, read> t0: array<f32>;
@group(0) @binding(3) var<storage, read> t1: array<f32>;
@group(0) @binding(4) var<storage, read> t2: array<f32>;
@group(0) @binding(5) var<storage, read> t3: array<f32>;

fn entry(r: u32, g: u32, b: u32) -> vec3<f32> {
    let e = (r * prm.n + g) * prm.n + b;
    let s = e / prm.slab;
    let i = (e - s * prm.slab) * 3u;
    if (s == 0u) {
        return vec3<f32>(t0[i], t0[i + 1u], t0[i + 2u]);
    } else if (s == 1u) {
        return vec3<f32>(t1[i], t1[i + 1u], t1[i + 2u]);
    } else if (s == 2u) {
        return vec3<f32>(t2[i], t2[i + 1u], t2[i + 2u]);
    }
    return vec3<f32>(t3[i], t3[i + 1u], t3[i + 2u]);
}

fn lerp(a: vec3<f32>, b: vec3<f32>, f: f32) -> vec3<f32> {
    return a + f * (b - a);
}

fn apply(rgb: vec3<f32>) -> vec3<f32> {
    let last = f32(prm.n - 1u);
    let ir = lut_index(rgb.x, prm.dmin.x, prm.scale.x, last);
    let ig = lut_index(rgb.y, prm.dmin.y, prm.scale.y, last);
    let ib = lut_index(rgb.z, prm.dmin.z, prm.scale.z, last);
    let r0 = u32(floor(ir));
    let g0 = u32(floor(ig));
    let b0 = u32(floor(ib));
    let top = prm.n - 1u;
    let r1 = min(r0 + 1u, top);
    let g1 = min(g0 + 1u, top);
    let b1 = min(b0 + 1u, top);
    let fr = ir - f32(r0);
    let fg = ig - f32(g0);
    let fb = ib - f32(b0);
    let c000 = entry(r0, g0, b0);
    let c111 = entry(r1, g1, b1);
$$ if TETRA
    if (fr > fg) {
        if (fg > fb) {
            return (1.0 - fr) * c000 + (fr - fg) * entry(r1, g0, b0) + (fg - fb) * entry(r1, g1, b0) + fb * c111;
        } else if (fr > fb) {
            return (1.0 - fr) * c000 + (fr - fb) * entry(r1, g0, b0) + (fb - fg) * entry(r1, g0, b1) + fg * c111;
        }
        return (1.0 - fb) * c000 + (fb - fr) * entry(r0, g0, b1) + (fr - fg) * entry(r1, g0, b1) + fg * c111;
    }
    if (fb > fg) {
        return (1.0 - fb) * c000 + (fb - fg) * entry(r0, g0, b1) + (fg - fr) * entry(r0, g1, b1) + fr * c111;
    } else if (fb > fr) {
        return (1.0 - fg) * c000 + (fg - fb) * entry(r0, g1, b0) + (fb - fr) * entry(r0, g1, b1) + fr * c111;
    }
    return (1.0 - fg) * c000 + (fg - fr) * entry(r0, g1, b0) + (fr - fb) * entry(r1, g1, b0) + fb * c111;
$$ else
    // Along blue, then green, then red; a + f * (b - a) as the CPU kernel, not mix()'s a * (1 - f) + b * f.
    let c00 = lerp(c000, entry(r0, g0, b1), fb);
    let c01 = lerp(entry(r0, g1, b0), entry(r0, g1, b1), fb);
    let c10 = lerp(entry(r1, g0, b0), entry(r1, g0, b1), fb);
    let c11 = lerp(entry(r1, g1, b0), c111, fb);
    return lerp(lerp(c00, c01, fg), lerp(c10, c11, fg), fr);
$$ endif
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let p = thread_index(wid, nwg, lid);
    if (p >= pixel_count()) {
        return;
    }
    let px = load_px(p);
    store_px(p, vec4<f32>(apply(px.xyz), px.w), false);
}
