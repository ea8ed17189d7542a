"""The wgpu backend's own machinery: binding windows, tap chunks, LUT slabs, transfers, caches, errors."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.errors import ProcessingError
from oxi_cli.ops import Blur, Cdl, Lut3d, Matrix, Resize
from tests import reference as ref
from tests.backends.conftest import SMALL_STAGING, SMALL_TABLE_WINDOW, SMALL_WINDOW
from tests.ops.harness import assert_bits_equal, run_color, run_spatial
from tests.ops.test_place import CASES as PLACES
from tests.ops.test_place import placed

SHAPE = (37, 23)


# --- results do not depend on how the work is cut into windows -----------------------------------------

COLOR_OPS = {
    "cdl": ("cdl", Cdl(slope=(1.1, 0.9, 1.3), offset=(0.01, 0.0, -0.02), power=(1.2, 0.8, 1.1), sat=0.7), ()),
    "matrix_alpha": ("matrix", Matrix.from_values(np.linspace(-0.5, 1.5, 16).tolist()), (True,)),
    "lut3d_tetra": ("lut3d", Lut3d(np.random.default_rng(1).random((33, 33, 33, 3), np.float32)), ()),
    "lut3d_trilinear": (
        "lut3d", Lut3d(np.random.default_rng(2).random((33, 33, 33, 3), np.float32), interp="trilinear"), ()
    ),
}


@pytest.mark.parametrize("channels", [3, 4, 5])
@pytest.mark.parametrize("name", COLOR_OPS)
def test_color_op_over_many_binding_windows_and_lut_slabs_matches_one_window(
    gpu_backend, small_window_gpu, name, channels
):
    # 37x23 pixels of 16 bytes span ~4 windows of 4 KiB; the 33^3 table spans 3 slabs of 12800 entries.
    method, op, args = COLOR_OPS[name]
    img = ref.hdr_image((*SHAPE, channels), seed=channels, nonfinite=True)
    if method == "matrix" and channels < 4:
        args = (False,)
    assert img.nbytes > 2 * SMALL_WINDOW
    if method == "lut3d":
        assert op.size**3 > 2 * SMALL_TABLE_WINDOW // 12
    whole = run_color(gpu_backend, img, method, op, *args)
    windowed = run_color(small_window_gpu, img, method, op, *args)
    assert_bits_equal(windowed, whole, f"{name} in small windows vs one window")


@pytest.mark.parametrize(
    ("op", "src_hw", "dst_hw"),
    [
        (Resize(17, 50, "lanczos3"), (37, 23), (50, 17)),
        (Resize(5, 3, "mitchell"), (300, 5), (3, 5)),  # 100x vertical shrink: taps run in chunks
        (Blur(1.5), (37, 23), (37, 23)),
        (Blur(10.0), (90, 5), (90, 5)),  # 61 taps over rows of 80 bytes: chunks of a 4 KiB window
    ],
    ids=["resize", "resize_tap_chunks", "blur", "blur_tap_chunks"],
)
@pytest.mark.parametrize("channels", [3, 4])
def test_spatial_op_over_windows_and_tap_chunks_matches_one_window(
    gpu_backend, small_window_gpu, op, src_hw, dst_hw, channels
):
    img = ref.hdr_image((*src_hw, channels), seed=41, nonfinite=True)
    whole = run_spatial(gpu_backend, img, op.name, op, dst_hw)
    windowed = run_spatial(small_window_gpu, img, op.name, op, dst_hw)
    assert_bits_equal(windowed, whole, f"{op} in small windows vs one window")


@pytest.mark.parametrize("channels", [1, 3, 4, 5])
@pytest.mark.parametrize("case", PLACES)
def test_place_over_many_binding_windows_copies_every_value_and_zeroes_the_rest(small_window_gpu, case, channels):
    # Bands of rows, each bound in a 4 KiB window of its own: NaN payloads, ±Inf and signed values must still
    # arrive unchanged where each band's rows land, zeros outside the source.
    img = ref.hdr_image((23, 37, channels), seed=channels, nonfinite=True)
    op = PLACES[case]
    got = run_spatial(small_window_gpu, img, "place", op, (op.height, op.width))
    assert_bits_equal(got, placed(img, op), f"place {op} in small windows")


def test_tap_chunks_really_happen_for_a_tall_blur(small_window_gpu):
    plan = list(small_window_gpu._vertical_plan(90, 61, 61, 5 * 4 * 4, lambda o0, o1, t0, t1: (
        min(max(o0 - 30 + t0, 0), 89), min(max(o1 - 1 - 30 + t1 - 1, 0), 89) + 1)))
    chunks = sorted({(t0, t1) for _, _, t0, t1, _, _ in plan})
    assert len(chunks) > 1 and chunks[0][0] == 0 and chunks[-1][1] == 61
    fit = (SMALL_WINDOW - 256) // 80
    assert all(hi - lo <= fit and o1 - o0 <= fit for o0, o1, _, _, lo, hi in plan)


# --- transfers ------------------------------------------------------------------------------------------

def _special_floats() -> np.ndarray:
    """float32 values that stress a float -> half conversion: ties, subnormals, overflow, NaN, -0.

    Casting them to float16 overflows on purpose (numpy warns); call under np.errstate(over="ignore").
    """
    tie = np.float32(1.0 + 2.0**-11)  # exactly between two halves: rounds to even
    vals = [0.0, -0.0, 1.0, tie, np.float32(1.0 + 3 * 2.0**-11), 65504.0, 65519.99, 65520.0, 7e4, -7e4,
            6.0e-8, 2.98e-8, 2.99e-8, 5.96e-8, 1e-5, -1e-5, 6.1e-5, 3e-39, np.inf, -np.inf, np.nan, -np.nan,
            1e30, -1e-30, 0.1, 1 / 3]
    rng = np.random.default_rng(9)
    spread = (rng.standard_normal(4000) * np.exp(rng.uniform(-20, 12, 4000))).astype(np.float32)
    return np.concatenate([np.asarray(vals, np.float32), spread])


@pytest.mark.parametrize("backend", ["gpu_backend", "small_window_gpu"])
def test_float32_round_trip_is_bit_exact(request, backend):
    b = request.getfixturevalue(backend)
    flat = _special_floats()
    img = np.resize(flat, (31, 17, 5)).astype(np.float32)  # 2635 floats: odd count, several staging chunks
    assert_bits_equal(b.download(b.upload(img)), img, "float32 upload + download")


@pytest.mark.parametrize("backend", ["gpu_backend", "small_window_gpu"])
def test_half_upload_widens_exactly(request, backend):
    b = request.getfixturevalue(backend)
    with np.errstate(over="ignore"):
        img = np.resize(_special_floats(), (13, 11, 3)).astype(np.float16)  # 429 halves: odd count
    got = b.download(b.upload(img))
    assert got.dtype == np.float32
    assert_bits_equal(got, img.astype(np.float32), "float16 upload")


@pytest.mark.parametrize("backend", ["gpu_backend", "small_window_gpu"])
def test_half_download_rounds_exactly_as_numpy(request, backend):
    # Round to nearest even, overflow to Inf, halves' subnormals, NaN stays NaN: numpy's astype(float16).
    b = request.getfixturevalue(backend)
    img = np.resize(_special_floats(), (13, 11, 3)).astype(np.float32)
    out = np.empty(img.shape, np.float16)
    assert b.download(b.upload(img), out) is out
    with np.errstate(over="ignore"):
        want = img.astype(np.float16)
    nan = np.isnan(want)
    assert (np.isnan(out) == nan).all(), "NaN positions differ"
    got_bits, want_bits = out.view(np.uint16)[~nan], want.view(np.uint16)[~nan]
    assert (got_bits == want_bits).all(), (
        f"{int((got_bits != want_bits).sum())} halves differ, e.g. {img[~nan][got_bits != want_bits][:5]}"
    )


@pytest.mark.parametrize("channels", [1, 3, 4, 5])
@pytest.mark.parametrize("backend", ["gpu_backend", "small_window_gpu"])
def test_half_planes_travel_as_runs_and_land_interleaved_exactly(request, backend, channels):
    # Planes go up and come back as one run per plane a chunk, the device (de)interleaving: every channel
    # count, and chunks that end mid-image (small_window_gpu), must put each value where numpy would.
    b = request.getfixturevalue(backend)
    with np.errstate(over="ignore"):
        img = np.resize(_special_floats(), (29, 23, channels)).astype(np.float16)
    planes = [img[..., c].copy() for c in range(channels)]
    handle = b.upload(planes)
    assert_bits_equal(b.download(handle), img.astype(np.float32), "half planes up, float32 down")
    got = np.stack(b.download_planes(handle, np.float16), axis=-1)
    nan = np.isnan(img)
    assert (np.isnan(got) == nan).all(), "NaN positions differ"
    assert (got.view(np.uint16)[~nan] == img.view(np.uint16)[~nan]).all(), "half planes down"
    assert_bits_equal(np.stack(planes, axis=-1), img, "the planes given")


def test_half_transfers_move_half_the_bytes(gpu_backend):
    # Not a timing: the staging path for a float16 array copies 2 bytes a value.
    img = np.ones((8, 8, 4), np.float16)
    handle = gpu_backend.upload(img)
    assert handle.shape == (8, 8, 4) and handle.nbytes == img.nbytes * 2


def test_download_into_a_non_contiguous_array(gpu_backend):
    img = ref.hdr_image((9, 14, 4), seed=2)
    target = np.zeros((9, 14, 8), np.float32)[..., ::2]
    gpu_backend.download(gpu_backend.upload(img), target)
    assert_bits_equal(target, img, "download into a strided view")


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_adopted_planes_receive_the_result_and_others_are_left_alone(gpu_backend, dtype):
    """A colour chain on planes the caller gave away comes back in those planes (no second image of host
    memory), with the bits a download into fresh planes gives; planes not given away are never written."""
    img = ref.hdr_image((9, 14, 4), seed=5).astype(dtype)
    op = Cdl(slope=(1.2, 0.9, 1.1), offset=(0.01, 0.0, -0.02), power=(0.9, 1.1, 1.0), sat=0.8)
    results = {}
    for adopt in (False, True):
        planes = [img[..., c].copy() for c in range(4)]
        handle = gpu_backend.upload(planes, adopt=adopt)
        gpu_backend.color_chain(handle, handle, [op], True)
        got = gpu_backend.download_planes(handle, dtype)
        assert all((g is p) == adopt for g, p in zip(got, planes, strict=True))
        if not adopt:
            assert_bits_equal(np.stack(planes, axis=-1), img, "planes not given away")
        results[adopt] = np.stack(got, axis=-1)
    assert_bits_equal(results[True], results[False], "download into adopted planes")


# --- compiled once, errors in one line -----------------------------------------------------------------

def test_pipelines_compile_once_per_specialisation(gpu_backend, small_window_gpu):
    img = ref.hdr_image((8, 8, 4), seed=1)

    def work(backend, slope):
        run_color(backend, img, "cdl", Cdl(slope=slope, style="asc"))
        run_spatial(backend, img, "blur", Blur(slope), (8, 8))

    work(gpu_backend, 1.5)
    compiled = gpu_backend.pipelines.compiled
    for backend in (gpu_backend, small_window_gpu):  # a second backend on the device shares the cache
        work(backend, 0.5)  # new parameters travel in uniforms, not in the shader
    assert gpu_backend.pipelines.compiled == compiled
    assert small_window_gpu.pipelines is gpu_backend.pipelines
    seven = ref.hdr_image((8, 8, 7), seed=1)  # seven channels: a specialisation no other test uses
    run_color(gpu_backend, seven, "cdl", Cdl(slope=1.5, style="asc"))
    run_color(gpu_backend, seven, "cdl", Cdl(slope=0.5, style="asc"))
    assert gpu_backend.pipelines.compiled == compiled + 1


def test_shader_files_are_found_and_templates_are_strict():
    from oxi_cli.backends.gpu.shaders import load_wgsl, render, wgsl_dir

    for name in ("cdl", "matrix", "lut1d", "lut3d", "resize", "blur", "color"):
        assert (wgsl_dir() / f"{name}.wgsl").is_file()
    spec = {"VEC4": True, "CH": 4, "ALPHA": False, "CHAIN": "    x = op_cdl_noclamp(x, ops[0]);"}
    code = render("color.wgsl", spec)
    assert "fn main" in code and "fn cdl_noclamp" in code and "fn lut3d_tetrahedral" in code
    assert "x = op_cdl_noclamp(x, ops[0]);" in code
    assert "#include" not in render("resize.wgsl", {"VERTICAL": True, "T": "f32", "PX": 3})
    with pytest.raises(KeyError, match="ALPHA"):
        render("color.wgsl", {"VEC4": True, "CH": 4, "CHAIN": ""})
    assert load_wgsl("common.wgsl") is load_wgsl("common.wgsl")


def test_spatial_op_refuses_to_write_over_its_source(gpu_backend):
    h = gpu_backend.upload(np.ones((4, 4, 3), np.float32))
    with pytest.raises(ProcessingError, match="destination apart"):
        gpu_backend.spatial(h, h, Blur(1.0))


def test_colour_op_needs_three_channels(gpu_backend):
    h = gpu_backend.upload(np.ones((4, 4, 2), np.float32))
    with pytest.raises(ProcessingError, match="R, G, B"):
        gpu_backend.color_chain(h, h, [Cdl(slope=2.0)], False)


def test_image_beyond_the_largest_buffer_is_a_clear_error(gpu_backend):
    side = int((gpu_backend.limits().max_buffer_bytes // 16) ** 0.5) + 2
    with pytest.raises(ProcessingError, match="exceeds the largest buffer") as info:
        gpu_backend.allocate(side, side, 4)
    assert "\n" not in str(info.value)


def test_limits_report_the_binding_window(gpu_backend, small_window_gpu):
    limits = gpu_backend.limits()
    assert limits.max_binding_bytes == gpu_backend.device.limits["max-storage-buffer-binding-size"] // 256 * 256
    assert small_window_gpu.limits().max_binding_bytes == SMALL_WINDOW
    assert 0 < limits.usable_memory <= limits.total_memory
    assert small_window_gpu._chunk == SMALL_STAGING


def test_warm_up_compiles_every_pipeline_the_chain_needs(gpu_backend):
    from oxi_cli.execute import run_chain, warm_up

    # Six channels: a specialisation no other test compiles, so every pipeline here is new.
    lut = Lut3d(np.random.default_rng(3).random((9, 9, 9, 3), np.float32), interp="trilinear")
    ops = [Cdl(slope=1.2, style="asc"), lut, Resize(9, 7, "mitchell"), Blur(1.0)]
    before = gpu_backend.pipelines.compiled
    warm_up(gpu_backend, ops, 6, False, half_input=False)
    assert gpu_backend.pipelines.compiled > before
    prepared = gpu_backend.pipelines.compiled
    img = ref.hdr_image((13, 11, 6), seed=6)
    planes = [np.ascontiguousarray(img[..., c]) for c in range(6)]
    gpu_backend.download_planes(run_chain(gpu_backend, planes, ops, False))
    assert gpu_backend.pipelines.compiled == prepared


def test_a_collected_image_lends_its_buffer_to_the_next_of_its_size(gpu_backend):
    import gc

    first = gpu_backend.allocate(37, 41, 3)
    buffer = first.buffer
    del first
    gc.collect()
    again = gpu_backend.allocate(41, 37, 3)  # same byte size
    assert again.buffer is buffer
    other = gpu_backend.allocate(40, 37, 3)
    assert other.buffer is not buffer
    again.release()  # released handles free their memory instead
    assert gpu_backend.allocate(41, 37, 3).buffer is not buffer


@pytest.mark.parametrize("channels", [3, 4, 5])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_interleaving_for_transfers_matches_numpy_across_pieces_and_offsets(channels, dtype):
    # Spans larger than a copy piece run on the pool, uploads through a bounce block: every seam (pieces,
    # blocks, a channel count that divides neither) must land each value where numpy's interleave puts it.
    from oxi_cli.backends.gpu.backend import COPY_PIECE, _shuffle

    rng = np.random.default_rng(channels)
    pixels = (2 * COPY_PIECE + 12345) // channels + 7
    planes = [rng.standard_normal(pixels).astype(dtype) for _ in range(channels)]
    image = np.stack(planes, axis=-1).reshape(-1)
    for first in (0, 1, channels + 2, COPY_PIECE - 3):
        flat = np.empty(image.size - first, dtype)
        _shuffle(flat, planes, first, to_planes=False)
        assert np.array_equal(flat, image[first:])
        back = [np.zeros_like(p) for p in planes]
        _shuffle(image[first:], back, first, to_planes=True)
        for k in range(channels):
            start = (first - k + channels - 1) // channels  # the first pixel whose channel k is at or after first
            assert np.array_equal(back[k][start:], planes[k][start:])
