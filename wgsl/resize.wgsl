// resize.wgsl: one pass of the separable resize. Tap tables come from the host, the same ones the CPU
// backend uses (ops.resize.axis_weights: pixel-centre mapping, filter stretched when shrinking,
// normalised weights, clamped edges): ps.aux taps per output index, `count` of them live.
#include "common.wgsl"

@group(0) @binding(3) var<storage, read> index: array<i32>;    // clamped source index per tap
@group(0) @binding(4) var<storage, read> weights: array<f32>;
@group(0) @binding(5) var<storage, read> counts: array<u32>;   // live taps per output index

fn tap_count(o: u32) -> u32 {
    return counts[o];
}

fn tap_source(o: u32, i: u32) -> i32 {
    return index[o * ps.aux + i];
}

fn tap_weight(o: u32, i: u32) -> f32 {
    return weights[o * ps.aux + i];
}

#include "separable.wgsl"
