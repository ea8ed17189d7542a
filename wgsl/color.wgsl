// color.wgsl: a chain of colour ops in one pass, each pixel read and written once. The chain is
// ops/program.py's flat program: rows of (op code, param offset, table offset, table size), as the CPU
// backend's colour interpreter runs it; each op's maths lives in its own file below. CHAIN holds one
// `x = op_<code name>(x, ops[j]);` line per op (ops/codes.py: wgsl_entry), so the pipeline is specialised on
// the op codes. There is no switch and no default branch: a code without its `op_` function below is a
// shader that does not compile, never another op's maths. ALPHA: some op reads or writes channel 3 (a 4x4
// matrix, un/premultiplying); otherwise it is 1 here.
#include "common.wgsl"
#include "pixels.wgsl"
#include "program.wgsl"

#include "cdl.wgsl"
#include "matrix.wgsl"
#include "lut1d.wgsl"
#include "lut3d.wgsl"
#include "exponent.wgsl"
#include "log.wgsl"
#include "range.wgsl"
#include "exposure_contrast.wgsl"
#include "aces2.wgsl"
#include "premult.wgsl"

// One function per op code of ops/codes.py, named after it: (r, g, b, a) and the op's program row in, the
// pixel out. tests/backends/test_op_codes.py checks the two lists are the same.
fn op_cdl_noclamp(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(cdl_noclamp(x.xyz, op.y), x.w); }
fn op_cdl_asc(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(cdl_asc(x.xyz, op.y), x.w); }
fn op_matrix_rgb(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(matrix_rgb(x.xyz, op.y), x.w); }
fn op_matrix_rgba(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return matrix_rgba(x, op.y); }
fn op_lut1d(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(lut1d(x.xyz, op.y, op.z, op.w), x.w); }
fn op_lut3d_tetrahedral(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(lut3d_tetrahedral(x.xyz, op.y, op.z, op.w), x.w);
}
fn op_lut3d_trilinear(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(lut3d_trilinear(x.xyz, op.y, op.z, op.w), x.w);
}
fn op_lut1d_half(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(lut1d_half(x.xyz, op.z), x.w); }
fn op_exponent(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(exponent(x.xyz, op.y), x.w); }
fn op_moncurve_fwd(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(moncurve(x.xyz, op.y, true), x.w); }
fn op_moncurve_rev(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(moncurve(x.xyz, op.y, false), x.w); }
fn op_lin_to_log(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(lin_to_log(x.xyz, op.y), x.w); }
fn op_log_to_lin(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(log_to_lin(x.xyz, op.y), x.w); }
fn op_range(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(range_clamp(x.xyz, op.y), x.w); }
fn op_exposure_contrast(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(exposure_contrast(x.xyz, op.y), x.w);
}
fn op_aces2_output(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(aces2_output(x.xyz, op.y, op.z), x.w);
}
fn op_matrix_scale(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return vec4<f32>(matrix_scale(x, op.y).xyz, x.w); }
fn op_matrix_scale_rgba(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return matrix_scale(x, op.y); }
fn op_unpremult(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return unpremult(x); }
fn op_repremult(x: vec4<f32>, op: vec4<u32>) -> vec4<f32> { return repremult(x); }

// The pixel as it entered the chain (alpha 1 without ALPHA): op_repremult gives back what entered with alpha 0.
var<private> source: vec4<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    // A chain calls only its own ops' functions, and the pipeline's layout ("auto") holds only the bindings
    // the shader uses: these keep every binding of the program in it (WGSL's idiom), as the backend binds all.
    _ = &chain;
    _ = &ops;
    _ = &params;
    _ = &t0;
    _ = &t1;
    _ = &t2;
    _ = &t3;
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
    source = x;
{{CHAIN}}
$$ if ALPHA
    store_px(p, x, true);
$$ else
    store_px(p, vec4<f32>(x.xyz, px.w), false);
$$ endif
}
