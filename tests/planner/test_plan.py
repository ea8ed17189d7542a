"""The planner's numbers, derived by hand from the chain, the pixel types and the limits; and its choices."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import OpenEXR
import pytest

from oxi_cli.backends.base import DeviceLimits
from oxi_cli.errors import UsageError
from oxi_cli.image import ImageMeta
from oxi_cli.io.common import ImageSpec
from oxi_cli.memory import DEFAULT_RAM_FRACTION, default_ram_budget, parse_bytes
from oxi_cli.ops import Blur, Cdl, Resize
from oxi_cli.ops.resize import axis_weights
from oxi_cli.plan import make_plan
from oxi_cli.spans import axis_spans, axis_steps, segments

BIG = 1 << 40
LIMITS = DeviceLimits(BIG, BIG, 1 << 20, BIG, BIG, True, adopts_host_arrays=True)  # the CPU's
DISCRETE_GPU = replace(LIMITS, shares_host_memory=False, adopts_host_arrays=False)
SOFTWARE_GPU = replace(LIMITS, shares_host_memory=True, adopts_host_arrays=False)


def spec(width: int = 1000, height: int = 600, header: dict | None = None, fmt: str = "exr") -> ImageSpec:
    types = {c: "half" for c in "RGBA"}
    return ImageSpec(width, height, list("RGBA"), ImageMeta(fmt, types, "zip", header or {}))


def plan(ops, ram=BIG, vram=None, force=None, **kw):
    kw.setdefault("runtime", 0)
    return make_plan(kw.pop("spec", spec()), ops, kw.pop("limits", LIMITS), ram, vram, force, **kw)


# --- sizes -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [("512M", 512 << 20), ("2G", 2 << 30), ("1.5GiB", 3 << 29), ("300MB", 300 << 20), ("64k", 64 << 10),
     ("4096", 4096), (" 8 m ", 8 << 20), ("1t", 1 << 40)],
)
def test_sizes_read_with_binary_units(text: str, want: int):
    assert parse_bytes(text) == want


@pytest.mark.parametrize("text", ["", "abc", "12Q", "-1M", "0", "M", "1.2.3G"])
def test_unreadable_sizes_are_a_usage_error_that_shows_the_format(text: str):
    with pytest.raises(UsageError, match="512M|at least 1 byte"):
        parse_bytes(text)


def test_the_default_ram_budget_is_half_of_available_memory():
    with open("/proc/meminfo") as f:
        available = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
    assert DEFAULT_RAM_FRACTION == 0.5
    assert default_ram_budget() == pytest.approx(available * 0.5, rel=0.05)


# --- how bands map back through the chain ------------------------------------------------------------------


def test_blur_bands_read_radius_rows_each_side_clamped_at_the_edges():
    steps = axis_steps([Blur(2.0)], 100, 0)  # R = ceil(3 * 2) = 6
    spans = axis_spans(steps, 100, *segments(100, 30))
    assert spans.read.tolist() == [[0, 36], [24, 66], [54, 96], [84, 100]]
    assert spans.crop[:, 0].tolist() == [0, 6, 6, 6]


def test_resize_bands_read_exactly_their_taps_range():
    steps = axis_steps([Resize(10, 40, "lanczos3")], 100, 0)
    spans = axis_spans(steps, 100, *segments(40, 7))
    ax = axis_weights("lanczos3", 100, 40)
    for (o0, o1), (r0, r1) in zip(spans.out, spans.read, strict=True):
        taps = [ax.index[o, t] for o in range(o0, o1) for t in range(ax.count[o])]
        assert (r0, r1) == (min(taps), max(taps) + 1)
    assert (spans.stages[0] == spans.out).all()  # a windowed resize computes exactly its band


def test_halos_accumulate_through_blur_resize_blur():
    # Blur R=3, then triangle 100 -> 50 (stretch 2, support 2: output o reads 2o-1 .. 2o+2), then blur R=2.
    # Output rows [10, 20) need [8, 22) after the resize, so input [15, 45), so [12, 48) before the blur.
    steps = axis_steps([Blur(1.0), Resize(10, 50, "triangle"), Blur(0.6)], 100, 0)
    spans = axis_spans(steps, 100, np.array([10]), np.array([20]))
    assert spans.read.tolist() == [[12, 48]]
    assert [s.tolist() for s in spans.stages] == [[[12, 48]], [[8, 22]], [[8, 22]]]
    assert spans.crop.tolist() == [[2, 12]]


# --- memory figures ----------------------------------------------------------------------------------------


def test_colour_only_single_pass_counts_file_planes_and_float_work():
    p = plan([Cdl(slope=1.2)])
    # 600k pixels: RGBA half in (8 B) and out (8 B), R, G, B as float32 work (12 B), computed in place.
    assert p.strategy == "single" and p.channels == 3
    assert p.ram_bytes == 600_000 * (8 + 8 + 12)
    assert p.vram_bytes == 600_000 * 12


def test_colour_only_bands_fit_four_decoded_one_working_and_three_encoded_bands():
    p = plan([Cdl(slope=1.2)], ram=1_000_000, force="streaming")
    # Per 1000-pixel row: 4 * 8 B in + 12 B work + 3 * 8 B out = 68000 B, so 14 rows fit 1,000,000 B.
    assert p.tile_height == 14
    assert p.count == math.ceil(600 / 14)
    assert p.ram_bytes == 68_000 * 14


def test_blur_bands_pay_for_their_halo_rows():
    p = plan([Blur(2.0)], ram=2_000_000, force="streaming")
    # All of RGBA works (16 B/px float). A middle band of n rows reads n + 12: in (n+12)*8000 four times, work
    # (n+12)*32000 (source and blurred copy), out n*8000 three times: 88000 n + 768000 <= 2e6 gives n = 14.
    assert p.tile_height == 14
    assert p.read_rows == 26
    assert p.ram_bytes == 88_000 * 14 + 768_000


def test_a_device_that_only_holds_thin_strips_gets_square_tiles_reading_less_halo():
    p = plan([Blur(2.0)], vram=1_000_000, force="tiled")
    # Device: source and blurred copy of (T+12)^2 pixels at 16 B: T = 128 uses 627,200 B, 256 would need 2.3 MB.
    assert (p.tile_width, p.tile_height) == (128, 128)
    assert p.count == 8 * 5
    assert p.vram_bytes == 32 * 140 * 140


def test_a_gpu_in_host_memory_counts_its_buffers_in_ram_too():
    ops = [Blur(2.0)]
    discrete = plan(ops, limits=DISCRETE_GPU)
    software = plan(ops, limits=SOFTWARE_GPU)
    assert software.ram_bytes - discrete.ram_bytes == software.vram_bytes


# --- choices -----------------------------------------------------------------------------------------------


def test_auto_picks_single_pass_when_everything_fits():
    p = plan([Blur(2.0)])
    assert p.strategy == "single" and p.fits and p.count == 1
    assert p.reason.startswith("the whole image fits")


def test_auto_tiles_when_the_image_fits_in_ram_but_not_on_the_device():
    p = plan([Blur(2.0)], vram=4 << 20)
    assert p.strategy == "tiled" and p.fits and p.count > 1
    assert p.vram_bytes <= 4 << 20


def test_auto_streams_when_the_image_does_not_fit_in_ram():
    p = plan([Blur(2.0)], ram=4 << 20)
    assert p.strategy == "streaming" and p.fits and p.count > 1
    assert p.ram_bytes <= 4 << 20 and "bands stream through" in p.reason


def test_auto_says_over_budget_when_not_even_one_row_fits():
    p = plan([Blur(2.0)], ram=10_000)
    assert p.strategy == "streaming" and not p.fits
    assert "over budget" in p.reason


def test_other_formats_never_stream_and_the_plan_says_why():
    p = plan([Blur(2.0)], ram=4 << 20, out_format="tiff", out_type="uint16")  # PNG streams since issue 34
    assert p.strategy != "streaming" and not p.fits
    assert "TIFF output can only be written whole" in p.reason
    with pytest.raises(UsageError, match="TIFF output can only be written whole"):
        plan([Blur(2.0)], force="streaming", out_format="tiff", out_type="uint16")


def test_forcing_single_pass_beyond_the_budget_is_a_usage_error_with_the_numbers():
    with pytest.raises(UsageError, match=r"--strategy single needs 16.0 MiB RAM \(budget 1.0 MiB\)"):
        plan([Cdl(slope=1.2)], ram=1 << 20, force="single")


def test_forcing_bands_that_cannot_fit_names_the_smallest_bands_cost():
    with pytest.raises(UsageError, match="even the smallest bands needs"):
        plan([Blur(2.0)], ram=10_000, force="streaming")


def test_an_unknown_strategy_is_a_usage_error():
    with pytest.raises(UsageError, match="auto, single, tiled, streaming"):
        plan([Blur(2.0)], force="fast")


def test_streaming_notes_tiled_and_bottom_up_inputs():
    tiles = OpenEXR.TileDescription()
    header = {"tiles": tiles, "lineOrder": OpenEXR.DECREASING_Y}
    p = plan([Blur(2.0)], ram=4 << 20, spec=spec(header=header))
    assert any("written as scanlines" in n for n in p.notes)
    assert any("INCREASING_Y" in n for n in p.notes)


def test_a_gpu_plan_bands_a_resize_anywhere_with_the_images_weights():
    p = plan([Resize(500, 240)], ram=4 << 20, limits=DISCRETE_GPU)
    assert p.strategy == "streaming" and p.count > 1 and p.fits
    assert not any("multiples" in n for n in p.notes)


def test_the_plan_serialises_to_json():
    p = plan([Blur(2.0)], ram=4 << 20)
    d = json.loads(json.dumps(p.to_dict()))
    assert d["strategy"] == "streaming" and d["tile_height"] == p.tile_height and d["fits"] is True
    assert "bands of" in p.summary()


def test_auto_runs_a_4k_frame_in_one_pass_even_though_it_would_band():
    p = plan([Blur(2.0)], spec=spec(4096, 2160))
    assert p.strategy == "single" and p.reason.startswith("the whole image fits")


def test_auto_bands_a_big_image_that_fits_to_overlap_decoding_compute_and_encoding():
    p = plan([Blur(2.0)], spec=spec(8192, 8192))
    assert p.strategy == "streaming" and p.fits and p.count > 1
    assert "bands overlap decoding" in p.reason
