// premult.wgsl: R, G, B divided by alpha (a pixel whose alpha is 0 kept as it is), and multiplied back by
// the alpha the pixel entered the program with, a pixel that entered with alpha 0 given back as it entered
// (color.wgsl's `source`): the colour ops between leave such pixels exactly as they were. Without alpha in
// the chain color.wgsl makes it 1 and both change nothing. Included by color.wgsl.

fn unpremult(x: vec4<f32>) -> vec4<f32> {
    return select(vec4<f32>(x.xyz / x.w, x.w), x, x.w == 0.0);
}

fn repremult(x: vec4<f32>) -> vec4<f32> {
    return select(vec4<f32>(x.xyz * source.w, x.w), source, source.w == 0.0);
}
