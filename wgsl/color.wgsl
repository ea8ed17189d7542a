// color.wgsl: a chain of colour ops in one pass, each pixel read and written once. The chain is
// ops.program's flat program: rows of (op code, param offset, table offset, table size), as the CPU
// backend's colour interpreter runs it; each op's maths lives in its own file below. CHAIN holds one
// `x = apply_op(CODE, x, ops[j]);` line per op (the pipeline is specialised on the op codes);
// ALPHA: some matrix reads and writes channel 3.
#include "common.wgsl"
#include "pixels.wgsl"

// Op codes of oxi_cli/ops/program.py.
const CDL_NOCLAMP: u32 = 0u;
const CDL_ASC: u32 = 1u;
const MATRIX_RGB: u32 = 2u;
const MATRIX_RGBA: u32 = 3u;
const LUT1D: u32 = 4u;
const LUT3D_TETRAHEDRAL: u32 = 5u;
const LUT3D_TRILINEAR: u32 = 6u;

struct Chain {
    count: u32,  // ops in the chain
    slab: u32,   // floats per table binding (a multiple of 3: an RGB entry never straddles two)
};
@group(0) @binding(1) var<uniform> chain: Chain;
@group(0) @binding(2) var<storage, read> ops: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> params: array<f32>;
// All tables of the chain, one after another, over up to four bindings: a 256^3 LUT (201 MB) exceeds
// some devices' 128 MiB binding limit.
@group(0) @binding(4) var<storage, read> t0: array<f32>;
@group(0) @binding(5) var<storage, read> t1: array<f32>;
@group(0) @binding(6) var<storage, read> t2: array<f32>;
@group(0) @binding(7) var<storage, read> t3: array<f32>;

fn table3(i: u32) -> vec3<f32> {
    let s = i / chain.slab;
    let j = i - s * chain.slab;
    if (s == 0u) {
        return vec3<f32>(t0[j], t0[j + 1u], t0[j + 2u]);
    } else if (s == 1u) {
        return vec3<f32>(t1[j], t1[j + 1u], t1[j + 2u]);
    } else if (s == 2u) {
        return vec3<f32>(t2[j], t2[j + 1u], t2[j + 2u]);
    }
    return vec3<f32>(t3[j], t3[j + 1u], t3[j + 2u]);
}

fn table(i: u32) -> f32 {
    let s = i / chain.slab;
    let j = i - s * chain.slab;
    if (s == 0u) {
        return t0[j];
    } else if (s == 1u) {
        return t1[j];
    } else if (s == 2u) {
        return t2[j];
    }
    return t3[j];
}

#include "cdl.wgsl"
#include "matrix.wgsl"
#include "lut1d.wgsl"
#include "lut3d.wgsl"

// One op of the chain on (r, g, b, a). Called with a constant code for each op in turn (CHAIN, generated
// from the program's op codes), so the compiler keeps only that op's branch: no interpreter loop.
fn apply_op(code: u32, x: vec4<f32>, op: vec4<u32>) -> vec4<f32> {
    switch code {
        case CDL_NOCLAMP: { return vec4<f32>(cdl_noclamp(x.xyz, op.y), x.w); }
        case CDL_ASC: { return vec4<f32>(cdl_asc(x.xyz, op.y), x.w); }
        case MATRIX_RGB: { return vec4<f32>(matrix_rgb(x.xyz, op.y), x.w); }
        case MATRIX_RGBA: { return matrix_rgba(x, op.y); }
        case LUT1D: { return vec4<f32>(lut1d(x.xyz, op.y, op.z, op.w), x.w); }
        case LUT3D_TETRAHEDRAL: { return vec4<f32>(lut3d_tetrahedral(x.xyz, op.y, op.z, op.w), x.w); }
        default: { return vec4<f32>(lut3d_trilinear(x.xyz, op.y, op.z, op.w), x.w); }
    }
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
    var x = px;
$$ else
    var x = vec4<f32>(px.xyz, 1.0);
$$ endif
{{CHAIN}}
$$ if ALPHA
    store_px(p, x, true);
$$ else
    store_px(p, vec4<f32>(x.xyz, px.w), false);
$$ endif
}
