// color.wgsl: a chain of colour ops in one pass, each pixel read and written once. The chain is
// ops/program.py's flat program: rows of (op code, param offset, table offset, table size), as the CPU
// backend's colour interpreter runs it; each op's maths lives in its own file below. CHAIN holds one
// `x = apply_op(CODE, x, ops[j]);` line per op (the pipeline is specialised on the op codes);
// ALPHA: some matrix reads and writes channel 3.
#include "common.wgsl"
#include "pixels.wgsl"
#include "program.wgsl"

// Op codes, generated from oxi_cli/ops/codes.py.
{{OP_CODES}}

#include "cdl.wgsl"
#include "matrix.wgsl"
#include "lut1d.wgsl"
#include "lut3d.wgsl"
#include "exponent.wgsl"
#include "log.wgsl"
#include "range.wgsl"
#include "exposure_contrast.wgsl"
#include "aces2.wgsl"

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
        case LUT3D_TRILINEAR: { return vec4<f32>(lut3d_trilinear(x.xyz, op.y, op.z, op.w), x.w); }
        case LUT1D_HALF: { return vec4<f32>(lut1d_half(x.xyz, op.z), x.w); }
        case EXPONENT: { return vec4<f32>(exponent(x.xyz, op.y), x.w); }
        case MONCURVE_FWD: { return vec4<f32>(moncurve(x.xyz, op.y, true), x.w); }
        case MONCURVE_REV: { return vec4<f32>(moncurve(x.xyz, op.y, false), x.w); }
        case LIN_TO_LOG: { return vec4<f32>(lin_to_log(x.xyz, op.y), x.w); }
        case LOG_TO_LIN: { return vec4<f32>(log_to_lin(x.xyz, op.y), x.w); }
        case RANGE: { return vec4<f32>(range_clamp(x.xyz, op.y), x.w); }
        case ACES2_OUTPUT: { return vec4<f32>(aces2_output(x.xyz, op.y, op.z), x.w); }
        default: { return vec4<f32>(exposure_contrast(x.xyz, op.y), x.w); }
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
