// place.wgsl: the image at an offset inside a box of zeros (pad and crop), one thread per element of a band
// of output rows. Output row r of the band reads row r - ps.y of the bound source rows and column c - ps.x;
// anything outside them is 0 in every channel. Elements are T (vec4<f32> for 4-channel images, else f32)
// and a pixel is PX elements.
#include "common.wgsl"

alias T = {{T}};
const PX: u32 = {{PX}}u;

struct Place {
    src_base: u32,      // element offset of the first bound source row inside the src binding
    dst_base: u32,      // element offset of the band's first row inside the dst binding
    src_width: i32,     // source pixels per row
    src_rows: i32,      // source rows bound (0: the band lies in a bar)
    row_elems: u32,     // elements per output row
    src_row_elems: u32, // elements per source row
    x: i32,             // output column of source column 0
    y: i32,             // band row of bound source row 0
    total: u32,         // threads doing work in this dispatch
};
@group(0) @binding(0) var<storage, read> src: array<T>;
@group(0) @binding(1) var<storage, read_write> dst: array<T>;
@group(0) @binding(2) var<uniform> ps: Place;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let idx = thread_index(wid, nwg, lid);
    if (idx >= ps.total) {
        return;
    }
    let r = idx / ps.row_elems;
    let e = idx - r * ps.row_elems;
    let p = e / PX;
    let sy = i32(r) - ps.y;
    let sx = i32(p) - ps.x;
    var v = T(0.0);
    if (sy >= 0 && sy < ps.src_rows && sx >= 0 && sx < ps.src_width) {
        v = src[ps.src_base + u32(sy) * ps.src_row_elems + u32(sx) * PX + (e - p * PX)];
    }
    dst[ps.dst_base + idx] = v;
}
