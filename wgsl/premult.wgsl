// premult.wgsl: R, G, B divided by alpha, and multiplied back by the alpha the pixel entered the program with
// (color.wgsl's `source`), as OIIO's colorconvert: an alpha under FLT_MIN (0, negative, denormal or NaN) counts
// as 1, so such pixels (a glow over nothing) are graded undivided. Without alpha in the chain color.wgsl makes it
// 1 and both change nothing. Included by color.wgsl.

fn divisor(a: f32) -> f32 {
    return select(1.0, a, a >= FLT_MIN && !is_nan(a));
}

fn unpremult(x: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(x.xyz / divisor(x.w), x.w);
}

fn repremult(x: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(x.xyz * divisor(source.w), x.w);
}
