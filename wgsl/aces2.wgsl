// aces2.wgsl: the ACES 2.0 output transform as OpenColorIO's CPU renderer computes it (ACES2/Transform.cpp),
// step for step as backends/cpu/kernels/aces2.py. params[o..] = ops/aces2.py's PARAM_NAMES (offsets below);
// tables[to..] = 363 rows of (hue, cusp J, cusp M, 1 / upper hull gamma, reach M). Included by color.wgsl.
#include "program.wgsl"
#include "mathf.wgsl"

const A2_RGB_TO_CAM: u32 = 0u;
const A2_CONE_TO_AAB: u32 = 9u;
const A2_AAB_TO_CONE: u32 = 18u;
const A2_CAM_TO_RGB: u32 = 27u;
const A2_CZ: u32 = 36u;
const A2_INV_CZ: u32 = 37u;
const A2_A_W_J: u32 = 38u;
const A2_INV_A_W_J: u32 = 39u;
const A2_F_L_N: u32 = 40u;
const A2_S_2: u32 = 41u;
const A2_M_2: u32 = 42u;
const A2_G: u32 = 43u;
const A2_T_1: u32 = 44u;
const A2_N_R: u32 = 45u;
const A2_LIMIT_J_MAX: u32 = 46u;
const A2_SAT: u32 = 47u;
const A2_SAT_THR: u32 = 48u;
const A2_COMPR: u32 = 49u;
const A2_CHROMA_SCALE: u32 = 50u;
const A2_MID_J: u32 = 51u;
const A2_FOCUS_DIST: u32 = 52u;
const A2_LOWER_GAMMA_INV: u32 = 53u;
const A2_SEARCH_LO: u32 = 54u;
const A2_SEARCH_HI: u32 = 55u;
const A2_ROW: u32 = 5u;
const A2_HUE: u32 = 0u;
const A2_CUSP_J: u32 = 1u;
const A2_CUSP_M: u32 = 2u;
const A2_GAMMA_TOP_INV: u32 = 3u;
const A2_REACH_M: u32 = 4u;
const A2_PI: f32 = 3.14159265358979;
const A2_NL_OFFSET: f32 = 27.13;
const A2_NL_POWER: f32 = 0.42;
const A2_NL_POWER_INV: f32 = 2.38095238;

// atan2 to a few float32 ulps: WGSL leaves its accuracy to the driver (Vulkan allows 4096 ulps), and the hue
// picks table rows. Octant reduction, then tan(pi/12) reduction, then the odd series to t^13.
fn a2_atan2(y: f32, x: f32) -> f32 {
    let ax = abs(x);
    let ay = abs(y);
    let hi = max(ax, ay);
    if (hi == 0.0) {
        return 0.0;
    }
    var t = min(ax, ay) / hi;
    var r = 0.0;
    if (t > 0.267949192) {
        t = (t * 1.73205081 - 1.0) / (t + 1.73205081);
        r = A2_PI / 6.0;
    }
    let z = t * t;
    r += t * (1.0 + z * (-0.333333333 + z * (0.2 + z * (-0.142857143 + z * (0.111111111 + z * (-0.0909090909
        + z * 0.0769230769))))));
    if (ay > ax) {
        r = A2_PI / 2.0 - r;
    }
    if (x < 0.0) {
        r = A2_PI - r;
    }
    return select(r, -r, y < 0.0);
}

// OCIO's std::max / std::min argument order: NaN in the second argument loses.
fn a2_max(a: f32, b: f32) -> f32 {
    return select(a, b, a < b);
}

fn a2_min(a: f32, b: f32) -> f32 {
    return select(a, b, b < a);
}

fn a2_lerp(a: f32, b: f32, z: f32) -> f32 {
    return (b - a) * z + a;
}

fn a2_mat(o: u32, v: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(v.x * params[o] + v.y * params[o + 1u] + v.z * params[o + 2u],
                     v.x * params[o + 3u] + v.y * params[o + 4u] + v.z * params[o + 5u],
                     v.x * params[o + 6u] + v.y * params[o + 7u] + v.z * params[o + 8u]);
}

fn a2_compress(v: f32) -> f32 {
    let f = pow_f32(abs(v), A2_NL_POWER);
    let ra = f / (A2_NL_OFFSET + f);
    return select(ra, -ra, v < 0.0);
}

fn a2_uncompress_abs(ra_in: f32) -> f32 {
    let ra = a2_min(ra_in, 0.99);
    return pow_f32(A2_NL_OFFSET * ra / (1.0 - ra), A2_NL_POWER_INV);
}

fn a2_toe(x: f32, limit: f32, k1_in: f32, k2_in: f32) -> f32 {
    if (x > limit) {
        return x;
    }
    let k2 = a2_max(k2_in, 0.001);
    let k1 = sqrt(k1_in * k1_in + k2 * k2);
    let k3 = (limit + k1) / (limit + k2);
    let minus_b = k3 * x - k1;
    let minus_ac = k2 * k3 * x;
    return 0.5 * (minus_b + sqrt(minus_b * minus_b + 4.0 * minus_ac));
}

fn a2_tonescale_j(a: f32, o: u32) -> f32 {
    let y = a2_uncompress_abs(params[o + A2_A_W_J] * a) / params[o + A2_F_L_N];
    let f = params[o + A2_M_2] * pow_f32(y / (y + params[o + A2_S_2]), params[o + A2_G]);
    let y_ts = a2_max(0.0, f * f / (f + params[o + A2_T_1])) * params[o + A2_N_R];
    let fly = pow_f32(y_ts * params[o + A2_F_L_N], A2_NL_POWER);
    return 100.0 * pow_f32((fly / (A2_NL_OFFSET + fly)) * params[o + A2_INV_A_W_J], params[o + A2_CZ]);
}

fn a2_chroma_compress(j: f32, m: f32, j_ts: f32, m_norm: f32, reach_m: f32, o: u32) -> f32 {
    if (m == 0.0) {
        return m;
    }
    let inv_gamma = params[o + A2_INV_CZ];
    let nj = j_ts / params[o + A2_LIMIT_J_MAX];
    let snj = a2_max(0.0, 1.0 - nj);
    let limit = pow_f32(nj, inv_gamma) * reach_m / m_norm;
    var m_cp = m * pow_f32(j_ts / j, inv_gamma);
    m_cp = m_cp / m_norm;
    m_cp = limit - a2_toe(limit - m_cp, limit - 0.001, snj * params[o + A2_SAT],
                          sqrt(nj * nj + params[o + A2_SAT_THR]));
    m_cp = a2_toe(m_cp, limit, nj * params[o + A2_COMPR], snj);
    return m_cp * m_norm;
}

fn a2_hue_interval(h: f32, to: u32, lo: i32, hi: i32) -> u32 {
    var i = 1 + i32(h);
    var i_lo = max(0, i + lo);
    var i_hi = min(361, i + hi);
    while (i_lo + 1 < i_hi) {
        if (h > table(to + u32(i) * A2_ROW + A2_HUE)) {
            i_lo = i;
        } else {
            i_hi = i;
        }
        i = (i_lo + i_hi) / 2;
    }
    return u32(max(1, i_hi));
}

fn a2_solve_j_intersect(j: f32, m: f32, focus_j: f32, max_j: f32, gain: f32) -> f32 {
    let m_scaled = m / gain;
    let a = m_scaled / focus_j;
    if (j < focus_j) {
        let b = 1.0 - m_scaled;
        let c = -j;
        return -2.0 * c / (b + sqrt(b * b - 4.0 * a * c));
    }
    let b = -(1.0 + m_scaled + max_j * a);
    let c = max_j * m_scaled + j;
    return -2.0 * c / (b - sqrt(b * b - 4.0 * a * c));
}

fn a2_line_boundary_m(j_axis: f32, slope: f32, inv_gamma: f32, j_max: f32, m_max: f32, j_ref: f32) -> f32 {
    let shifted = j_ref * pow_f32(j_axis / j_ref, inv_gamma);
    return shifted * m_max / (j_max - slope * m_max);
}

// (J, M) after gamut compression towards the limiting gamut's hull at hue h.
fn a2_gamut_compress(j: f32, m: f32, h: f32, reach_m: f32, o: u32, to: u32) -> vec2<f32> {
    let limit_j = params[o + A2_LIMIT_J_MAX];
    if (j <= 0.0) {
        return vec2<f32>(0.0, 0.0);
    }
    if (m <= 0.0 || j > limit_j) {
        return vec2<f32>(j, 0.0);
    }
    let i = a2_hue_interval(h, to, i32(params[o + A2_SEARCH_LO]), i32(params[o + A2_SEARCH_HI]));
    let lo = to + (i - 1u) * A2_ROW;
    let hi = to + i * A2_ROW;
    let w = (h - table(lo + A2_HUE)) / (table(hi + A2_HUE) - table(lo + A2_HUE));
    let cusp_j = a2_lerp(table(lo + A2_CUSP_J), table(hi + A2_CUSP_J), w);
    let cusp_m = a2_lerp(table(lo + A2_CUSP_M), table(hi + A2_CUSP_M), w);
    let gamma_top_inv = a2_lerp(table(lo + A2_GAMMA_TOP_INV), table(hi + A2_GAMMA_TOP_INV), w);
    let focus_j = a2_lerp(cusp_j, params[o + A2_MID_J], a2_min(1.0, 1.3 - (cusp_j / limit_j)));
    let threshold = a2_lerp(cusp_j, limit_j, 0.3);

    var gain = limit_j * params[o + A2_FOCUS_DIST];
    if (j > threshold) {
        let adjust = log2_f32((limit_j - threshold) / a2_max(0.0001, limit_j - j)) * 0.301029995663981;
        gain = gain * (adjust * adjust + 1.0);
    }
    let j_source = a2_solve_j_intersect(j, m, focus_j, limit_j, gain);
    let scaler = select(limit_j - j_source, j_source, j_source < focus_j);
    let slope = scaler * (j_source - focus_j) / (focus_j * gain);
    let j_cusp = a2_solve_j_intersect(cusp_j, cusp_m, focus_j, limit_j, gain);

    let lower = a2_line_boundary_m(j_source, slope, params[o + A2_LOWER_GAMMA_INV], cusp_j, cusp_m, j_cusp);
    let upper = a2_line_boundary_m(limit_j - j_source, -slope, gamma_top_inv, limit_j - cusp_j, cusp_m,
                                   limit_j - j_cusp);
    let s = 0.12 * cusp_m;
    let k = a2_max(s - abs(lower - upper), 0.0) / s;
    let boundary = a2_min(lower, upper) - k * k * k * s * (1.0 / 6.0);
    if (boundary <= 0.0) {
        return vec2<f32>(j, 0.0);
    }

    let reach = a2_line_boundary_m(j_source, slope, params[o + A2_INV_CZ], limit_j, reach_m, limit_j);
    let proportion = a2_max(boundary / reach, 0.75);
    let threshold_m = proportion * boundary;
    if (m <= threshold_m || proportion >= 1.0) {
        return vec2<f32>(j_source + m * slope, m);
    }
    // Reinhard curve from the threshold: the gamut boundary maps to itself, the reach boundary to infinity.
    let reach_offset = reach - threshold_m;
    let scale = reach_offset / ((reach_offset / (boundary - threshold_m)) - 1.0);
    let nd = (m - threshold_m) / scale;
    let remapped = threshold_m + scale * nd / (1.0 + nd);
    return vec2<f32>(j_source + remapped * slope, remapped);
}

fn a2_uncompress(v: f32) -> f32 {
    let x = a2_uncompress_abs(abs(v));
    return select(x, -x, v < 0.0);
}

// ACES AP0 in, display-linear RGB of the limiting gamut out; NaN or Inf in gives NaN out, A <= 0 black.
fn aces2_output(rgb: vec3<f32>, o: u32, to: u32) -> vec3<f32> {
    let c = a2_mat(o + A2_RGB_TO_CAM, rgb);
    let aab = a2_mat(o + A2_CONE_TO_AAB, vec3<f32>(a2_compress(c.x), a2_compress(c.y), a2_compress(c.z)));
    if (is_nan(aab.x) || is_nan(aab.y) || is_nan(aab.z)) {
        return vec3<f32>(bitcast<f32>(0x7fc00000u));
    }
    if (aab.x <= 0.0) {
        return vec3<f32>(0.0);
    }
    let j = 100.0 * pow_f32(aab.x, params[o + A2_CZ]);
    let m = sqrt(aab.y * aab.y + aab.z * aab.z);
    var h = 180.0 * a2_atan2(aab.z, aab.y) / A2_PI;
    if (h < 0.0) {
        h = h + 360.0;
    }
    h = min(h, 360.0);  // a driver's atan2 may round past pi
    let base = u32(h);
    let reach_m = a2_lerp(table(to + (base + 1u) * A2_ROW + A2_REACH_M), table(to + (base + 2u) * A2_ROW + A2_REACH_M),
                          h - f32(base));
    // cos h and sin h as a / M and b / M: the driver's cos and sin may be far less accurate (Vulkan allows
    // 2^-11), and M times their error lands in the output's a and b.
    var cos1 = 1.0;
    var sin1 = 0.0;
    if (m > 0.0) {
        cos1 = aab.y / m;
        sin1 = aab.z / m;
    }
    let cos2 = 2.0 * cos1 * cos1 - 1.0;
    let sin2 = 2.0 * cos1 * sin1;
    let cos3 = 4.0 * cos1 * cos1 * cos1 - 3.0 * cos1;
    let sin3 = 3.0 * sin1 - 4.0 * sin1 * sin1 * sin1;
    let m_norm = (11.34072 * cos1 + 16.46899 * cos2 + 7.88380 * cos3 + 14.66441 * sin1 - 6.37224 * sin2
                  + 9.19364 * sin3 + 77.12896) * params[o + A2_CHROMA_SCALE];

    let j_ts = a2_tonescale_j(aab.x, o);
    let m_cp = a2_chroma_compress(j, m, j_ts, m_norm, reach_m, o);
    let jm = a2_gamut_compress(j_ts, m_cp, h, reach_m, o, to);

    let a_out = pow_f32(jm.x * 0.01, params[o + A2_INV_CZ]);
    let cone = a2_mat(o + A2_AAB_TO_CONE, vec3<f32>(a_out, jm.y * cos1, jm.y * sin1));
    return a2_mat(o + A2_CAM_TO_RGB, vec3<f32>(a2_uncompress(cone.x), a2_uncompress(cone.y), a2_uncompress(cone.z)));
}
