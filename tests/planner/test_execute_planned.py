"""execute_planned() file to file: streamed and tiled outputs are the single-pass file, atomically written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from oxi_cli.errors import UsageError
from oxi_cli.ops import Blur, Cdl, Resize
from oxi_cli.ops.resize import ResizeStep, SizeSpec
from oxi_cli.stream import execute_planned, plan_for_files
from tests.io.files import assert_same_planes, box, planes, read_exr, write_exr
from tests.planner.conftest import plate

GRADE = Cdl(slope=(1.1, 0.9, 1.3), offset=0.01, power=1.2, sat=0.8)
CHAIN = [GRADE, Blur(1.5), Resize(687, 518, "lanczos3")]
# --fit into a 700x560 box: the picture's windows (fit), bars (pad), the overflow cut (fill)
FITS = {mode: ResizeStep(SizeSpec(700, 560), fit=mode).resolve(1031, 777) for mode in ("fit", "pad", "fill")}
ATTRS = {
    "owner": "sh010_comp_v003",
    "exposure": 1.75,
    "worldToCamera": np.arange(16, dtype=np.float32).reshape(4, 4),
    "dataWindow": box(7, -5, 7 + 1031 - 1, -5 + 777 - 1),
    "displayWindow": box(0, 0, 1099, 799),
}


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """1031x777 RGBA half + float Z + uint32 id, offset data window, attributes: a render's beauty pass."""
    return write_exr(tmp_path_factory.mktemp("plate") / "beauty.exr", plate().planes, **ATTRS)


def _run(ops, src: Path, dst: Path, backend, strategy: str, memory: str | None = None, vram: str | None = None,
         **kw):
    plan = plan_for_files(ops, src, dst, backend, strategy=strategy, memory_limit=memory, vram_limit=vram,
                          out_type=kw.get("out_type", "same"))
    assert plan.strategy == strategy
    return plan, execute_planned(ops, src, dst, backend, plan, **kw)


def _same_file(got: Path, want: Path) -> None:
    got_header, got_planes = read_exr(got)
    want_header, want_planes = read_exr(want)
    assert {k: repr(v) for k, v in got_header.items()} == {k: repr(v) for k, v in want_header.items()}
    assert_same_planes(got_planes, want_planes)


@pytest.mark.parametrize("ops", [[GRADE], CHAIN, *FITS.values()],
                         ids=["colour", "cdl-blur-resize", *(f"fit-{m}" for m in FITS)])
def test_streamed_and_tiled_files_equal_the_single_pass_file(backend, source: Path, tmp_path: Path, ops):
    _run(ops, source, tmp_path / "single.exr", backend, "single")
    plan, result = _run(ops, source, tmp_path / "streamed.exr", backend, "streaming", memory="8M")
    assert plan.count > 1 and result.out_width == plan.out_width
    _same_file(tmp_path / "streamed.exr", tmp_path / "single.exr")
    plan, _ = _run(ops, source, tmp_path / "tiled.exr", backend, "tiled", memory="64M", vram="4M")
    assert plan.count > 1
    _same_file(tmp_path / "tiled.exr", tmp_path / "single.exr")


def test_tiny_limits_make_auto_tile_or_stream(cpu_backend, source: Path, tmp_path: Path):
    out = tmp_path / "out.exr"
    assert plan_for_files(CHAIN, source, out, cpu_backend, memory_limit="8M").strategy == "streaming"
    assert plan_for_files(CHAIN, source, out, cpu_backend, memory_limit="64M", vram_limit="4M").strategy == "tiled"
    assert plan_for_files(CHAIN, source, out, cpu_backend).strategy == "single"


def test_out_type_and_compression_hold_when_streaming(cpu_backend, source: Path, tmp_path: Path):
    kw = {"out_type": "float", "codec": "piz"}
    _run(CHAIN, source, tmp_path / "single.exr", cpu_backend, "single", **kw)
    _run(CHAIN, source, tmp_path / "streamed.exr", cpu_backend, "streaming", memory="8M", **kw)
    header, got = read_exr(tmp_path / "streamed.exr")
    assert header["compression"] == OpenEXR.PIZ_COMPRESSION
    assert {p.dtype for p in got.values()} == {np.dtype(np.float32)}
    _same_file(tmp_path / "streamed.exr", tmp_path / "single.exr")


def test_a_tiled_bottom_up_input_streams_to_scanlines_and_the_plan_says_so(cpu_backend, tmp_path: Path):
    tiles = OpenEXR.TileDescription()
    tiles.xSize, tiles.ySize = 64, 32
    src = write_exr(tmp_path / "in.exr", planes("RGBA", (300, 200), "half", 1), type=OpenEXR.tiledimage,
                    tiles=tiles, lineOrder=OpenEXR.DECREASING_Y)
    _run([Blur(2.0)], src, tmp_path / "single.exr", cpu_backend, "single")
    plan, _ = _run([Blur(2.0)], src, tmp_path / "streamed.exr", cpu_backend, "streaming", memory="1M")
    assert any("scanlines" in n for n in plan.notes) and any("INCREASING_Y" in n for n in plan.notes)
    header, got = read_exr(tmp_path / "streamed.exr")
    assert header["type"] == OpenEXR.scanlineimage and header["lineOrder"] == OpenEXR.INCREASING_Y
    assert_same_planes(got, read_exr(tmp_path / "single.exr")[1])


def test_a_failure_mid_stream_leaves_the_old_output_and_no_temporary(cpu_backend, source: Path, tmp_path: Path):
    out = tmp_path / "out.exr"
    out.write_bytes(b"previous render")
    seen = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        if len(seen) == 2:
            raise KeyboardInterrupt

    plan = plan_for_files(CHAIN, source, out, cpu_backend, strategy="streaming", memory_limit="8M")
    with pytest.raises(KeyboardInterrupt):
        execute_planned(CHAIN, source, out, cpu_backend, plan, progress=progress)
    assert out.read_bytes() == b"previous render"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.exr"]


def test_progress_counts_output_rows_up_to_the_total(cpu_backend, source: Path, tmp_path: Path):
    seen: list[tuple[int, int]] = []
    plan = plan_for_files(CHAIN, source, tmp_path / "o.exr", cpu_backend, strategy="streaming", memory_limit="8M")
    execute_planned(CHAIN, source, tmp_path / "o.exr", cpu_backend, plan, progress=lambda d, t: seen.append((d, t)))
    assert len(seen) == plan.count and seen[-1] == (518, 518)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_streaming_over_the_input_needs_in_place(cpu_backend, tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", planes("RGBA", (300, 200), "half", 2))
    _run([Blur(2.0)], src, tmp_path / "single.exr", cpu_backend, "single")
    plan = plan_for_files([Blur(2.0)], src, src, cpu_backend, strategy="streaming", memory_limit="1M")
    with pytest.raises(UsageError, match="--in-place"):
        execute_planned([Blur(2.0)], src, src, cpu_backend, plan)
    execute_planned([Blur(2.0)], src, src, cpu_backend, plan, in_place=True)
    assert_same_planes(read_exr(src)[1], read_exr(tmp_path / "single.exr")[1])


def test_multi_part_and_tiff_go_whole_and_forcing_streaming_says_why(cpu_backend, tmp_path: Path):
    display = box(0, 0, 199, 99)
    parts = [
        OpenEXR.Part({"compression": OpenEXR.ZIP_COMPRESSION, "displayWindow": display},
                     planes("RGBA", (100, 200), "half", 3), "beauty"),
        OpenEXR.Part({"compression": OpenEXR.ZIP_COMPRESSION, "displayWindow": display},
                     planes(["Z"], (100, 200), "float", 4), "depth"),
    ]
    OpenEXR.File(parts).write(str(tmp_path / "parts.exr"))
    single = write_exr(tmp_path / "one.exr", planes("RGBA", (100, 200), "half", 5))
    for src, dst, why in [
        (tmp_path / "parts.exr", tmp_path / "o.exr", "multi-part"),
        (single, tmp_path / "o.tif", "TIFF output"),  # PNG streams (tests/io/test_png_stream.py); TIFF not yet
    ]:
        plan = plan_for_files([Blur(2.0)], src, dst, cpu_backend, memory_limit="64K", out_type="uint16")
        assert plan.strategy != "streaming" and not plan.fits and why in plan.reason
        with pytest.raises(UsageError, match=why):
            plan_for_files([Blur(2.0)], src, dst, cpu_backend, strategy="streaming", out_type="uint16")


def test_fit_windows_sit_in_the_sources_display_origin(cpu_backend, source: Path, tmp_path: Path):
    """The box takes the display window's place (its origin kept); the picture's data window lies inside it.
    (oiiotool fits the display window's picture; oxi fits the pixels, the data window, see docs/GUIDE.md.)"""
    _run(FITS["fit"], source, tmp_path / "fit.exr", cpu_backend, "single")
    header, _ = read_exr(tmp_path / "fit.exr")
    assert [p.tolist() for p in header["displayWindow"]] == [[0, 0], [699, 559]]
    assert [p.tolist() for p in header["dataWindow"]] == [[0, 16], [699, 543]]  # 1031x777 -> 700x528
