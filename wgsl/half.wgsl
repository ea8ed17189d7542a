// half.wgsl: half-float transfer conversion, bit for bit as numpy's astype: PACK turns f32 into IEEE
// halves two to a u32 (round to nearest even, overflow to Inf, NaN payload and sign kept); otherwise
// halves two to a u32 are widened to f32 (exact, NaN payloads kept). Integer code only: WGSL leaves
// pack2x16float's rounding and overflow to the driver, and NVIDIA's unpack2x16float rewrites NaN payloads.
// The halves travel in `planes` runs, one per channel of the window's pixels, so that the host copies each
// plane whole instead of interleaving it; the device stores pixels interleaved. planes = 1: as stored.
#include "common.wgsl"

struct Params {
    count: u32,   // f32 elements in this window: whole pixels when planes > 1
    planes: u32,  // runs of count / planes halves, one per channel
};
@group(0) @binding(2) var<uniform> prm: Params;

// The element of the window (pixel-major) that half s of the transfer carries, and back.
fn element_of(s: u32) -> u32 {
    let run = prm.count / prm.planes;
    return (s % run) * prm.planes + s / run;
}

fn half_of(e: u32) -> u32 {
    let run = prm.count / prm.planes;
    return (e % prm.planes) * run + e / prm.planes;
}

$$ if PACK
@group(0) @binding(0) var<storage, read> vals: array<f32>;
@group(0) @binding(1) var<storage, read_write> raw: array<u32>;

fn half_bits(x: f32) -> u32 {
    let f = bitcast<u32>(x);
    let sign = (f >> 16u) & 0x8000u;
    let fexp = f & 0x7f800000u;
    let fsig = f & 0x007fffffu;
    if (fexp >= 0x47800000u) {
        if (fexp == 0x7f800000u && fsig != 0u) {
            var nan = 0x7c00u + (fsig >> 13u);
            if (nan == 0x7c00u) {
                nan = 0x7c01u;
            }
            return sign | nan;
        }
        return sign | 0x7c00u;
    }
    if (fexp <= 0x38000000u) {
        if (fexp < 0x33000000u) {
            return sign;
        }
        var sig = (0x00800000u + fsig) >> (113u - (fexp >> 23u));
        if ((sig & 0x3fffu) != 0x1000u || (f & 0x7ffu) != 0u) {
            sig += 0x1000u;
        }
        return sign + (sig >> 13u);
    }
    var sig = fsig;
    if ((sig & 0x3fffu) != 0x1000u) {
        sig += 0x1000u;
    }
    return sign + ((fexp - 0x38000000u) >> 13u) + (sig >> 13u);
}

// Halves i and i + 1 (when it exists) of the transfer travel in raw[j].
fn convert_pair(j: u32, i: u32) {
    var hi = 0u;
    if (i + 1u < prm.count) {
        hi = half_bits(vals[element_of(i + 1u)]);
    }
    raw[j] = half_bits(vals[element_of(i)]) | (hi << 16u);
}
$$ else
@group(0) @binding(0) var<storage, read> raw: array<u32>;
@group(0) @binding(1) var<storage, read_write> vals: array<f32>;

fn widen(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let exp = (h >> 10u) & 0x1fu;
    let man = h & 0x3ffu;
    if (exp == 31u) {
        return bitcast<f32>(sign | 0x7f800000u | (man << 13u));
    }
    if (exp != 0u) {
        return bitcast<f32>(sign | ((exp + 112u) << 23u) | (man << 13u));
    }
    if (man == 0u) {
        return bitcast<f32>(sign);
    }
    // Subnormal half: man * 2^-24, a normal float once the leading bit moves to the hidden bit.
    let lead = firstLeadingBit(man);
    return bitcast<f32>(sign | ((lead + 103u) << 23u) | ((man << (23u - lead)) & 0x7fffffu));
}

fn half_at(s: u32) -> u32 {
    return (raw[s >> 1u] >> ((s & 1u) * 16u)) & 0xffffu;
}

// Elements i and i + 1 (when it exists) of the window.
fn convert_pair(j: u32, i: u32) {
    vals[i] = widen(half_at(half_of(i)));
    if (i + 1u < prm.count) {
        vals[i + 1u] = widen(half_at(half_of(i + 1u)));
    }
}
$$ endif

// One invocation per pair: two halves of raw (PACK) or two elements of vals.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let j = thread_index(wid, nwg, lid);
    if (2u * j < prm.count) {
        convert_pair(j, 2u * j);
    }
}
