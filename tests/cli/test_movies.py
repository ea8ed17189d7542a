"""Review movies (-o review.mov): real encoding with PyAV, decoded back and compared with oxi's own review frames."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from tests.cli.conftest import OXI, read_exr, run_oxi
from tests.cli.movie_helpers import ACES_SDR, SDR, decoded, planes, psnr, sequence, to_rgb

FRAMES = [1001, 1002, 1003, 1004, 1005]


def float_review(pattern: str, out: Path, *view: str) -> list[np.ndarray]:
    """oxi's own float review frames of the sequence (the display's code values, clipped as a movie clips)."""
    done = run_oxi("display", pattern, "-o", str(out / "ref.####.exr"), "--out-type", "float", *view, "-q")
    assert done.returncode == 0, done.stderr
    frames = []
    for path in sorted(out.glob("ref.*.exr")):
        _, p = read_exr(path)
        frames.append(np.clip(np.stack([p["R"], p["G"], p["B"]], axis=-1).astype(np.float64), 0, 1))
    return frames


def nothing_left(folder: Path, movie: Path) -> None:
    assert not movie.exists()
    assert not [p.name for p in folder.iterdir() if ".oxi-tmp-" in p.name]


def test_prores_hq_frames_match_the_float_review_frames_to_50_db(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES)
    movie = tmp_path / "review.mov"
    done = run_oxi("display", pattern, "-o", str(movie), *ACES_SDR)
    assert done.returncode == 0, done.stderr
    assert "oxi: wrote" in done.stderr and "ProRes 422 HQ" in done.stderr
    refs = float_review(pattern, tmp_path / "ref", *ACES_SDR)
    frames = decoded(movie)
    assert len(frames) == len(FRAMES)
    assert frames[0].format.name == "yuv422p10le"
    scores = [psnr(to_rgb(f), ref) for f, ref in zip(frames, refs, strict=True)]
    assert min(scores) >= 50, scores
    with av.open(str(movie)) as c:
        v = c.streams.video[0]
        assert v.codec_context.name == "prores" and str(v.codec_context.profile) == "HQ"
        assert v.average_rate == 24
        assert v.metadata["timecode"] == "00:00:41:17"  # frame 1001 counted at 24 fps
        ctx = v.codec_context
        tags = (ctx.color_primaries, ctx.color_trc, ctx.colorspace, ctx.color_range)
        assert tuple(int(t) for t in tags) == (1, 13, 1, 1)  # BT.709 primaries, sRGB transfer, BT.709 matrix, video


def test_h264_at_the_default_quality_matches_to_42_db_and_decodes_in_order(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES, size=(256, 144))  # 45.2-45.6 dB (128x72: 42.5, a thin margin)
    movie = tmp_path / "review.mp4"
    done = run_oxi("display", pattern, "-o", str(movie), *SDR, "-q")
    assert done.returncode == 0, done.stderr
    refs = float_review(pattern, tmp_path / "ref", *SDR)
    frames = decoded(movie)
    assert frames[0].format.name == "yuv420p"
    rgb = [to_rgb(f) for f in frames]
    assert min(psnr(a, ref) for a, ref in zip(rgb, refs, strict=True)) >= 42
    # Order: each decoded frame is nearest its own reference.
    for i, a in enumerate(rgb):
        assert int(np.argmax([psnr(a, ref) for ref in refs])) == i


@pytest.mark.parametrize(
    ("codec", "suffix", "pix_fmt", "floor"),
    [("h265", ".mp4", "yuv420p10le", 42), ("prores", ".mov", "yuv422p10le", 48),
     ("dnxhr_hq", ".mov", "yuv422p", 42), ("dnxhr_hqx", ".mov", "yuv422p10le", 45)],
)
def test_every_codec_decodes_back_tagged_and_close(tmp_path: Path, codec: str, suffix: str, pix_fmt: str,
                                                   floor: float):
    pattern = sequence(tmp_path / "in", FRAMES[:3], size=(256, 144))
    movie = tmp_path / f"review{suffix}"
    done = run_oxi("display", pattern, "-o", str(movie), "--codec", codec, *SDR, "-q")
    assert done.returncode == 0, done.stderr
    refs = float_review(pattern, tmp_path / "ref", *SDR)
    frames = decoded(movie)
    assert [f.format.name for f in frames] == [pix_fmt] * 3
    assert min(psnr(to_rgb(f), r) for f, r in zip(frames, refs, strict=True)) >= floor
    info = json.loads(run_oxi("info", str(movie), "--json").stdout)
    assert info["codec"] == codec and info["frames"] == 3
    assert info["colour"] == {"primaries": "bt709", "transfer": "iec61966-2-1 (sRGB)", "matrix": "bt709",
                              "range": "video (limited)", "display": "sRGB"}


def test_prores_4444_keeps_alpha(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:2])
    movie = tmp_path / "review.mov"
    done = run_oxi("display", pattern, "-o", str(movie), "--codec", "prores_4444", *SDR, "-q")
    assert done.returncode == 0, done.stderr
    (frame, _) = decoded(movie)
    assert frame.format.name.startswith("yuva444p")
    (*_, alpha), bits = planes(frame)
    _, exr = read_exr(tmp_path / "in" / "plate.1001.exr")
    assert np.abs(alpha / (2**bits - 1) - exr["A"].astype(np.float64)).max() < 2 / 1023


def test_rate_and_timecode_come_from_the_frames_attributes(tmp_path: Path):
    import OpenEXR

    tc = OpenEXR.TimeCode(1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    pattern = sequence(tmp_path / "in", [7, 8, 9], framesPerSecond=Fraction(24000, 1001), timeCode=tc)
    movie = tmp_path / "review.mov"
    assert run_oxi("display", pattern, "-o", str(movie), *SDR, "-q").returncode == 0
    info = json.loads(run_oxi("info", str(movie), "--json").stdout)
    assert (info["fps"], info["timecode"], info["frames"]) == ("24000/1001", "01:02:03:04", 3)


@pytest.mark.parametrize(("fps", "rate", "timecode"), [("23.976", "24000/1001", "00:00:41:17"),
                                                       ("25", "25/1", "00:00:40:01"),
                                                       ("59.94", "60000/1001", "00:00:16:41")])
def test_fps_sets_the_rate_and_the_frame_number_the_start_timecode(tmp_path: Path, fps: str, rate: str,
                                                                   timecode: str):
    pattern = sequence(tmp_path / "in", [1001, 1002])
    movie = tmp_path / "review.mp4"
    assert run_oxi("display", pattern, "-o", str(movie), "--fps", fps, *SDR, "-q").returncode == 0
    info = json.loads(run_oxi("info", str(movie), "--json").stdout)
    assert (info["fps"], info["timecode"], info["frames"]) == (rate, timecode, 2)


def test_a_gap_is_refused_in_one_line_and_nothing_is_written(tmp_path: Path):
    pattern = sequence(tmp_path / "in", [1001, 1002, 1004])
    movie = tmp_path / "review.mov"
    done = run_oxi("display", pattern, "-o", str(movie), *SDR)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"oxi: error: {movie}: frames 1003 (1 frame) are missing; render them, or pass --continue-on-error to "
        "hold the previous frame over each gap"]
    nothing_left(tmp_path, movie)


def test_continue_on_error_holds_the_previous_frame_over_gaps_and_says_so(tmp_path: Path):
    pattern = sequence(tmp_path / "in", [1001, 1002, 1004, 1007])
    movie = tmp_path / "review.mov"
    done = run_oxi("display", pattern, "-o", str(movie), "--continue-on-error", *SDR)
    assert done.returncode == 1, done.stderr  # frames were missing: the batch says so in its status
    assert "7 frames; held over 3 missing or failed" in done.stderr
    rgb = [to_rgb(f) for f in decoded(movie)]
    assert len(rgb) == 7
    same = [bool(np.array_equal(rgb[i], rgb[i - 1])) for i in range(1, 7)]
    assert same == [False, True, False, True, True, False]  # 1003 holds 1002; 1005 and 1006 hold 1004


def test_a_first_frame_past_a_leading_gap_is_held_back_over_it(tmp_path: Path):
    pattern = sequence(tmp_path / "in", [1003, 1004])
    movie = tmp_path / "review.mov"
    done = run_oxi("display", pattern, "-o", str(movie), "--frames", "1001-1004", "--continue-on-error", *SDR)
    assert done.returncode == 1, done.stderr
    rgb = [to_rgb(f) for f in decoded(movie)]
    assert len(rgb) == 4 and np.array_equal(rgb[0], rgb[2]) and np.array_equal(rgb[1], rgb[2])
    assert not np.array_equal(rgb[2], rgb[3])


def test_an_unknown_codec_is_refused_with_the_names_and_nothing_is_written(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:1])
    movie = tmp_path / "review.mov"
    done = run_oxi("display", pattern, "-o", str(movie), "--codec", "prores_hd", *SDR)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "--codec 'prores_hd' is unknown" in line and "prores_hq" in line
    nothing_left(tmp_path, movie)


def test_prores_in_an_mp4_is_refused(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:1])
    done = run_oxi("display", pattern, "-o", str(tmp_path / "r.mp4"), "--codec", "prores_hq", *SDR)
    assert done.returncode == 2 and "goes in a .mov" in done.stderr
    nothing_left(tmp_path, tmp_path / "r.mp4")


def test_a_display_movies_cannot_tag_is_refused_in_one_line(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:2])
    movie = tmp_path / "review.mov"
    done = run_oxi("display", pattern, "-o", str(movie), "--from", "ACEScg", "--display",
                   "Gamma 2.6 P3-D65 - Display", "--view", "Un-tone-mapped")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "'Gamma 2.6 P3-D65 - Display', which movie colour tags cannot describe" in line
    nothing_left(tmp_path, movie)


def test_scene_referred_frames_are_refused(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:2])
    movie = tmp_path / "review.mov"
    done = run_oxi("cdl", pattern, "-o", str(movie), "--slope", "1.1")
    assert done.returncode == 2 and "not display-referred" in done.stderr
    nothing_left(tmp_path, movie)


def test_rec2100_pq_is_tagged_and_an_8_bit_codec_refused(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:2])
    pq = ("--from", "ACEScg", "--to", "Rec.2100-PQ - Display", "--config", "ocio://studio-config-latest")
    movie = tmp_path / "hdr.mov"
    assert run_oxi("colorspace", pattern, "-o", str(movie), *pq, "-q").returncode == 0
    info = json.loads(run_oxi("info", str(movie), "--json").stdout)
    assert info["colour"]["display"] == "Rec.2100 PQ"
    assert (info["colour"]["primaries"], info["colour"]["matrix"]) == ("bt2020", "bt2020nc")
    done = run_oxi("colorspace", pattern, "-o", str(tmp_path / "hdr.mp4"), *pq)
    assert done.returncode == 2 and "Rec.2100 PQ needs 10 bits" in done.stderr
    nothing_left(tmp_path, tmp_path / "hdr.mp4")


def test_odd_sizes_are_padded_for_4_2_0_and_said(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:2], size=(127, 71))
    movie = tmp_path / "review.mp4"
    done = run_oxi("display", pattern, "-o", str(movie), *SDR)
    assert done.returncode == 0, done.stderr
    assert "needs even sizes: the 127x71 frames are padded to 128x72" in done.stderr
    (first, _) = decoded(movie)
    assert (first.width, first.height) == (128, 72)


def test_burn_ins_are_drawn_where_asked(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:1], size=(256, 144))
    plain, burnt = tmp_path / "plain.mov", tmp_path / "burnt.mov"
    assert run_oxi("display", pattern, "-o", str(plain), *SDR, "-q").returncode == 0
    done = run_oxi("display", pattern, "-o", str(burnt), *SDR, "-q", "--burn", "top-right:{shot} {frame} {timecode}")
    assert done.returncode == 0, done.stderr
    (a,), (b,) = decoded(plain), decoded(burnt)
    changed = np.abs(to_rgb(a) - to_rgb(b)).max(axis=-1) > 0.05
    ys, xs = np.nonzero(changed)
    assert changed.any() and ys.max() < 144 // 2 and xs.min() > 256 // 2  # top right only
    done = run_oxi("display", pattern, "-o", str(tmp_path / "x.mov"), *SDR, "--burn", "{reel}")
    assert done.returncode == 2 and "--burn field {reel} is unknown" in done.stderr


def test_a_recipe_sets_the_codec_rate_and_burn_ins(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:2])
    recipe = tmp_path / "dailies.toml"
    recipe.write_text('[output]\ncodec = "h264"\nfps = "25"\nburn = "{frame}"\n\n[[op]]\ndisplay = "sRGB - Display"\n'
                      'from = "ACEScg"\nview = "Un-tone-mapped"\n')
    movie = tmp_path / "review.mov"
    assert run_oxi("run", "--recipe", str(recipe), pattern, "-o", str(movie), "-q").returncode == 0
    info = json.loads(run_oxi("info", str(movie), "--json").stdout)
    assert (info["codec"], info["fps"], info["frames"]) == ("h264", "25/1", 2)


def test_an_existing_movie_needs_overwrite(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES[:1])
    movie = tmp_path / "review.mov"
    movie.write_bytes(b"keep")
    done = run_oxi("display", pattern, "-o", str(movie), *SDR)
    assert done.returncode == 2 and "--overwrite" in done.stderr and movie.read_bytes() == b"keep"
    assert run_oxi("display", pattern, "-o", str(movie), *SDR, "--overwrite", "-q").returncode == 0
    assert len(decoded(movie)) == 1


def _limited_file_size(limit: int):
    def apply() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail (EFBIG) as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_full_disk_fails_in_one_line_and_leaves_nothing(tmp_path: Path):
    pattern = sequence(tmp_path / "in", FRAMES, size=(256, 144))
    movie = tmp_path / "out" / "review.mov"
    movie.parent.mkdir()
    job = [sys.executable, "-m", "oxi_cli", "display", pattern, *SDR]
    env = {**os.environ, "OXI_BACKEND": "cpu", "OXI_SERVER": "off"}
    # The same job once without the limit: its kernels' caches are written, so the limit meets only the movie.
    subprocess.run([*job, "-o", str(tmp_path / "warm.mov")], env=env, timeout=300, check=True, capture_output=True)
    done = subprocess.run([*job, "-o", str(movie)], capture_output=True, text=True, env=env, timeout=300,
                          preexec_fn=_limited_file_size(60_000))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert f"cannot write {movie}" in done.stderr and "nothing was left behind" in done.stderr
    nothing_left(movie.parent, movie)


def test_ctrl_c_mid_movie_leaves_nothing_and_exits_130(tmp_path: Path):
    pattern = sequence(tmp_path / "in", list(range(1, 41)), size=(960, 540))
    movie = tmp_path / "review.mov"
    cmd = [OXI] if OXI else [sys.executable, "-m", "oxi_cli"]
    proc = subprocess.Popen([*cmd, "display", pattern, "-o", str(movie), *SDR, "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "OXI_BACKEND": "cpu"})
    try:
        first = json.loads(proc.stdout.readline())  # the first frame is in the movie; the rest are coming
        assert first["status"] == "ok"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    nothing_left(tmp_path, movie)


def test_frames_in_flight_under_jobs_reach_the_movie_in_order(tmp_path: Path):
    pattern = sequence(tmp_path / "in", list(range(1, 9)))
    one, two = tmp_path / "one.mov", tmp_path / "two.mov"
    assert run_oxi("display", pattern, "-o", str(one), *SDR, "-q").returncode == 0
    assert run_oxi("display", pattern, "-o", str(two), *SDR, "-q", "--jobs", "2").returncode == 0
    a, b = decoded(one), decoded(two)
    assert len(a) == len(b) == 8
    assert all(np.array_equal(x.to_ndarray(), y.to_ndarray()) for x, y in zip(a, b, strict=True))


def test_a_corrupt_frame_stops_the_movie_or_is_held_over(tmp_path: Path):
    pattern = sequence(tmp_path / "in", [1, 2, 3])
    (tmp_path / "in" / "plate.0002.exr").write_bytes(b"not an exr file at all")
    movie = tmp_path / "review.mov"
    done = run_oxi("display", pattern, "-o", str(movie), *SDR)
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr
    assert f"no movie was written to {movie}; --continue-on-error holds" in done.stderr
    nothing_left(tmp_path, movie)
    done = run_oxi("display", pattern, "-o", str(movie), *SDR, "--continue-on-error")
    assert done.returncode == 1 and "3 frames; held over 1 missing or failed" in done.stderr
    rgb = [to_rgb(f) for f in decoded(movie)]
    assert np.array_equal(rgb[0], rgb[1]) and not np.array_equal(rgb[1], rgb[2])


def test_a_movie_leaves_layers_out_without_a_warning(tmp_path: Path):
    from tests.cli.conftest import hdr_rgba, write_exr

    (tmp_path / "in").mkdir()
    for f in (1, 2):
        write_exr(tmp_path / "in" / f"plate.{f:04d}.exr", hdr_rgba(36, 64, seed=f))  # with diffuse.R, G, B
    done = run_oxi("display", str(tmp_path / "in" / "plate.####.exr"), "-o", str(tmp_path / "r.mov"), *SDR)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr


def test_memory_stays_flat_however_many_frames_the_movie_has(tmp_path: Path):
    # Each 640x360 frame is ~2.8 MB as float R'G'B' and ~0.9 MB as Y'CbCr: 40 frames held would add ~150 MB.
    pattern = sequence(tmp_path / "in", list(range(1, 41)), size=(640, 360))
    done = run_oxi("display", pattern, "-o", str(tmp_path / "review.mov"), *SDR, "--json",
                   env={"OXI_SERVER": "off"})  # the process's own peak, not a warm worker's
    assert done.returncode == 0, done.stderr
    peaks = [json.loads(line)["peak_memory_bytes"] for line in done.stdout.splitlines()]
    assert len(peaks) == 40
    assert peaks[-1] - peaks[9] < 40 << 20, [p >> 20 for p in peaks]


def test_frames_of_another_size_are_refused_or_held(tmp_path: Path):
    pattern = sequence(tmp_path / "in", [1, 3])
    sequence(tmp_path / "in", [2], size=(96, 54))
    movie = tmp_path / "review.mov"
    done = run_oxi("display", pattern, "-o", str(movie), *SDR)
    assert done.returncode == 1 and "but the movie's frames are 128x72; give frames of one size" in done.stderr
    nothing_left(tmp_path, movie)
    done = run_oxi("display", pattern, "-o", str(movie), *SDR, "--continue-on-error", "-q")
    assert done.returncode == 1 and len(decoded(movie)) == 3


def test_frames_already_for_a_display_are_tagged_by_what_they_declare(tmp_path: Path):
    pattern = sequence(tmp_path / "in", [1, 2])
    review = tmp_path / "review.####.exr"
    assert run_oxi("display", pattern, "-o", str(review), *SDR, "-q").returncode == 0  # tagged srgb_rec709_display
    movie = tmp_path / "review.mp4"
    done = run_oxi("run", str(review), "-o", str(movie), "-q")  # no conversion: the frames' own colorInteropID
    assert done.returncode == 0, done.stderr
    assert json.loads(run_oxi("info", str(movie), "--json").stdout)["colour"]["display"] == "sRGB"
    done = run_oxi("run", pattern, "-o", str(tmp_path / "scene.mp4"))
    assert done.returncode == 2 and "not display-referred" in done.stderr
