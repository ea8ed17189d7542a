// separable.wgsl: one pass of a separable filter over windows of src and dst, included by resize and blur.
// The includer defines, for output index o: tap_count(o), and for its tap i the weight tap_weight(o, i)
// and the source index tap_source(o, i), already clamped to the image (edges replicate).
// VERTICAL filters along rows of a band (taps t0..t1, optionally accumulating into dst so a support
// taller than one binding window runs as several dispatches); otherwise along x inside whole rows.
// Elements are T (vec4<f32> for 4-channel images, else f32) and a pixel is PX elements.

alias T = {{T}};
const PX: u32 = {{PX}}u;

struct Pass {
    src_base: u32,      // element offset of the first bound source row inside the src binding
    dst_base: u32,      // element offset of the first output row inside the dst binding
    src_len: u32,       // source pixels along the filter axis (edge clamp)
    row_elems: u32,     // elements per output row
    src_row_elems: u32, // elements per source row
    o0: u32,            // first output index of this dispatch along the filter axis
    lo: i32,            // first source row held by the src window (vertical)
    t0: u32,            // taps t0..t1 of each output (vertical)
    t1: u32,
    accumulate: u32,    // 1: add to what dst holds (a later tap chunk)
    total: u32,         // threads doing work in this dispatch
    aux: u32,           // the includer's own number (resize: taps per output; blur: radius)
};
@group(0) @binding(0) var<storage, read> src: array<T>;
@group(0) @binding(1) var<storage, read_write> dst: array<T>;
@group(0) @binding(2) var<uniform> ps: Pass;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let idx = thread_index(wid, nwg, lid);
    if (idx >= ps.total) {
        return;
    }
    let r = idx / ps.row_elems;
    let e = idx - r * ps.row_elems;
$$ if VERTICAL
    let o = ps.o0 + r;
    let count = min(tap_count(o), ps.t1);
    let out_i = ps.dst_base + r * ps.row_elems + e;
    var acc = T(0.0);
    if (ps.accumulate != 0u) {
        acc = dst[out_i];
    }
    for (var i = ps.t0; i < count; i++) {
        let y = u32(tap_source(o, i) - ps.lo);
        acc += tap_weight(o, i) * src[ps.src_base + y * ps.src_row_elems + e];
    }
    dst[out_i] = acc;
$$ else
    let x = e / PX;
    let c = e - x * PX;
    let count = tap_count(x);
    let row = ps.src_base + r * ps.src_row_elems + c;
    var acc = T(0.0);
    for (var i = 0u; i < count; i++) {
        acc += tap_weight(x, i) * src[row + u32(tap_source(x, i)) * PX];
    }
    dst[ps.dst_base + r * ps.row_elems + e] = acc;
$$ endif
}
