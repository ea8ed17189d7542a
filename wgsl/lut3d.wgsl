// lut3d.wgsl: 3D LUT interpolated by hand in f32 from storage buffers (no texture filtering), trilinear
// or OCIO's six-tetrahedra split; params[o..o+6] = domain minimum RGB and index scale RGB; tables[to..]
// holds N^3 RGB entries, entry ((r * N + g) * N + b). Included by color.wgsl.
#include "program.wgsl"

struct LutCell {
    lo: vec3<u32>,
    hi: vec3<u32>,
    f: vec3<f32>,
};

fn lut3d_cell(v: vec3<f32>, o: u32, n: u32) -> LutCell {
    let last = f32(n - 1u);
    let i = vec3<f32>(lut_index(v.x, params[o], params[o + 3u], last),
                      lut_index(v.y, params[o + 1u], params[o + 4u], last),
                      lut_index(v.z, params[o + 2u], params[o + 5u], last));
    let lo = vec3<u32>(i);
    return LutCell(lo, min(lo + vec3<u32>(1u), vec3<u32>(n - 1u)), i - vec3<f32>(lo));
}

fn lut3d_entry(to: u32, n: u32, r: u32, g: u32, b: u32) -> vec3<f32> {
    return table3(to + ((r * n + g) * n + b) * 3u);
}

fn lerp3(a: vec3<f32>, b: vec3<f32>, f: f32) -> vec3<f32> {
    return a + f * (b - a);  // as the CPU kernel, not mix()'s a * (1 - f) + b * f
}

fn lut3d_trilinear(v: vec3<f32>, o: u32, to: u32, n: u32) -> vec3<f32> {
    let k = lut3d_cell(v, o, n);
    let r0 = k.lo.x; let g0 = k.lo.y; let b0 = k.lo.z;
    let r1 = k.hi.x; let g1 = k.hi.y; let b1 = k.hi.z;
    // Along blue, then green, then red.
    let c00 = lerp3(lut3d_entry(to, n, r0, g0, b0), lut3d_entry(to, n, r0, g0, b1), k.f.z);
    let c01 = lerp3(lut3d_entry(to, n, r0, g1, b0), lut3d_entry(to, n, r0, g1, b1), k.f.z);
    let c10 = lerp3(lut3d_entry(to, n, r1, g0, b0), lut3d_entry(to, n, r1, g0, b1), k.f.z);
    let c11 = lerp3(lut3d_entry(to, n, r1, g1, b0), lut3d_entry(to, n, r1, g1, b1), k.f.z);
    return lerp3(lerp3(c00, c01, k.f.y), lerp3(c10, c11, k.f.y), k.f.x);
}

fn lut3d_tetrahedral(v: vec3<f32>, o: u32, to: u32, n: u32) -> vec3<f32> {
    let k = lut3d_cell(v, o, n);
    let r0 = k.lo.x; let g0 = k.lo.y; let b0 = k.lo.z;
    let r1 = k.hi.x; let g1 = k.hi.y; let b1 = k.hi.z;
    let fr = k.f.x; let fg = k.f.y; let fb = k.f.z;
    let c000 = lut3d_entry(to, n, r0, g0, b0);
    let c111 = lut3d_entry(to, n, r1, g1, b1);
    if (fr > fg) {
        if (fg > fb) {
            return (1.0 - fr) * c000 + (fr - fg) * lut3d_entry(to, n, r1, g0, b0)
                + (fg - fb) * lut3d_entry(to, n, r1, g1, b0) + fb * c111;
        } else if (fr > fb) {
            return (1.0 - fr) * c000 + (fr - fb) * lut3d_entry(to, n, r1, g0, b0)
                + (fb - fg) * lut3d_entry(to, n, r1, g0, b1) + fg * c111;
        }
        return (1.0 - fb) * c000 + (fb - fr) * lut3d_entry(to, n, r0, g0, b1)
            + (fr - fg) * lut3d_entry(to, n, r1, g0, b1) + fg * c111;
    }
    if (fb > fg) {
        return (1.0 - fb) * c000 + (fb - fg) * lut3d_entry(to, n, r0, g0, b1)
            + (fg - fr) * lut3d_entry(to, n, r0, g1, b1) + fr * c111;
    } else if (fb > fr) {
        return (1.0 - fg) * c000 + (fg - fb) * lut3d_entry(to, n, r0, g1, b0)
            + (fb - fr) * lut3d_entry(to, n, r0, g1, b1) + fr * c111;
    }
    return (1.0 - fg) * c000 + (fg - fr) * lut3d_entry(to, n, r0, g1, b0)
        + (fr - fb) * lut3d_entry(to, n, r1, g1, b0) + fb * c111;
}
