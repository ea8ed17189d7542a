// pixels.wgsl: in-place pixel access for the colour ops, one thread per pixel of the bound window.
// VEC4 images (4 channels) are bound as array<vec4<f32>>; others as array<f32> with CH floats a pixel.

$$ if VEC4
@group(0) @binding(0) var<storage, read_write> img: array<vec4<f32>>;

fn pixel_count() -> u32 {
    return arrayLength(&img);
}

fn load_px(p: u32) -> vec4<f32> {
    return img[p];
}

// The whole vec4 is written: callers carry channel 3 through unless they mean to change it.
fn store_px(p: u32, v: vec4<f32>, with_alpha: bool) {
    img[p] = v;
}
$$ else
@group(0) @binding(0) var<storage, read_write> img: array<f32>;
const CH: u32 = {{CH}}u;

fn pixel_count() -> u32 {
    return arrayLength(&img) / CH;
}

fn load_px(p: u32) -> vec4<f32> {
    let b = p * CH;
    var a = 1.0;
    if (CH > 3u) {
        a = img[b + 3u];
    }
    return vec4<f32>(img[b], img[b + 1u], img[b + 2u], a);
}

fn store_px(p: u32, v: vec4<f32>, with_alpha: bool) {
    let b = p * CH;
    img[b] = v.x;
    img[b + 1u] = v.y;
    img[b + 2u] = v.z;
    if (with_alpha && CH > 3u) {
        img[b + 3u] = v.w;
    }
}
$$ endif
