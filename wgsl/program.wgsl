// program.wgsl: the colour program's bindings (oxi_cli/ops/program.py) and its table look-ups, shared by
// color.wgsl and every colour op's file: op rows, float parameters and the tables of all ops in the chain.

#include "common.wgsl"

struct Chain {
    count: u32,  // ops in the chain
    slab: u32,   // floats per table binding (a multiple of 3: an RGB entry never straddles two)
    zero: u32,   // always 0: see unfused_mul
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

// a * b rounded to float32 before anything is added to it. Vulkan drivers may fuse a * b + c into one fma
// (NVIDIA's do): one rounding instead of two is no longer OCIO's (nor the CPU's) result, and where terms cancel,
// as in a matrix row on HDR values, the output then differs from OCIO's by far more than 1e-5 of itself. An OR
// with a uniform that the compiler cannot know is 0 keeps the product a value of its own.
fn unfused_mul(a: f32, b: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(a * b) | chain.zero);
}

fn unfused_mul3(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
    return bitcast<vec3<f32>>(bitcast<vec3<u32>>(a * b) | vec3<u32>(chain.zero));
}

fn unfused_mul4(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(bitcast<vec4<u32>>(a * b) | vec4<u32>(chain.zero));
}

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
