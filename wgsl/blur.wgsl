// blur.wgsl: one pass of the separable Gaussian; taps -R..R (R = ps.aux) share one normalised weight row
// (the Blur op's own weights, as the CPU backend uses them); edges replicate.
#include "common.wgsl"

@group(0) @binding(3) var<storage, read> weights: array<f32>;  // 2R + 1 weights

fn tap_count(o: u32) -> u32 {
    return 2u * ps.aux + 1u;
}

fn tap_source(o: u32, i: u32) -> i32 {
    return clamp(i32(o) - i32(ps.aux) + i32(i), 0, i32(ps.src_len) - 1);
}

fn tap_weight(o: u32, i: u32) -> f32 {
    return weights[i];
}

#include "separable.wgsl"
