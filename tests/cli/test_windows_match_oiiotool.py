"""Resize and blur of EXRs whose data window is not their display window, as studios write them: the windows
oiiotool gives, its pixels (a float64 model of OIIO's resize, checked against oiiotool itself), black outside
the data window, on every backend; multi-part files under one display window."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from tests import reference as ref
from tests.cli.conftest import run_oxi
from tests.cli.test_fit_modes import OIIO_RTOL, OIIOTOOL, _oiio_options, needs_oiiotool
from tests.io.files import box, read_exr, read_exr_parts, window

# name -> (data window, display window), each (x, y, width, height).
CASES = {
    "inside": ((40, 30, 121, 91), (0, 0, 200, 150)),
    "display_origin": ((50, 35, 120, 90), (30, 20, 200, 150)),  # oiiotool keeps the display origin
    "negative_origin": ((-80, -41, 121, 91), (-100, -50, 200, 150)),
    "odd_offset": ((41, 31, 121, 91), (0, 0, 200, 150)),
    "touching_sides": ((0, 13, 200, 97), (0, 0, 200, 150)),  # left and right edges repeat, top and bottom fade
    "overscan": ((-10, -10, 220, 170), (0, 0, 200, 150)),
}
SCALES = ["50%", "37%", "150%"]


def _xy(b: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    return box(b[0], b[1], b[0] + b[2] - 1, b[1] + b[3] - 1)


def _write(path: Path, parts: list[tuple[tuple, tuple, np.ndarray]]) -> Path:
    exr_parts = []
    for i, (data, display, rgba) in enumerate(parts):
        header = {"compression": OpenEXR.ZIP_COMPRESSION, "dataWindow": _xy(data), "displayWindow": _xy(display),
                  "type": OpenEXR.scanlineimage}
        planes = {c: np.ascontiguousarray(rgba[..., k]) for k, c in enumerate("RGBA")}
        exr_parts.append(OpenEXR.Part(header, planes, f"part{i}"))
    OpenEXR.File(exr_parts).write(str(path))
    return path


def _picture(data: tuple, seed: int) -> np.ndarray:
    """HDR RGBA float32 with alpha in [0, 1], over the data window."""
    rgba = ref.hdr_image((data[3], data[2], 4), seed).astype(np.float32)
    rgba[..., 3] = np.random.default_rng(seed).random((data[3], data[2]), dtype=np.float32)
    return rgba


def _rgba(planes: dict[str, np.ndarray]) -> np.ndarray:
    return np.stack([planes[c] for c in "RGBA"], axis=-1).astype(np.float64)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("windows")
    return {name: _write(folder / f"{name}.exr", [(data, display, _picture(data, i))])
            for i, (name, (data, display)) in enumerate(CASES.items())}


def _oiio_resize(src: Path, out: Path, scale: str) -> tuple[dict, np.ndarray]:
    subprocess.run([OIIOTOOL, "-a", str(src), "--resize:filter=lanczos3", scale, "-o", str(out)], check=True,
                   capture_output=True)
    header, planes = read_exr(out)
    return header, _rgba(planes)


@needs_oiiotool
@pytest.mark.parametrize("scale", SCALES)
def test_resize_gives_oiiotools_windows_and_pixels(each_backend, files: dict[str, Path], tmp_path: Path,
                                                   scale: str):
    out = tmp_path / "oxi"
    res = run_oxi("resize", *map(str, files.values()), "-o", str(out), "--scale", scale, "--filter", "lanczos3",
                  "--backend",
                  each_backend.name)
    assert res.returncode == 0, res.stderr
    for name, src in files.items():
        data, display = CASES[name]
        want_header, want = _oiio_resize(src, tmp_path / f"oiio_{name}.exr", scale)
        got_header, got_planes = read_exr(out / src.name)
        what = f"{name} at {scale}"
        windows = [window(want_header[k]) for k in ("dataWindow", "displayWindow")]
        assert [window(got_header[k]) for k in ("dataWindow", "displayWindow")] == windows, what
        out_data, out_display = ((w[0], w[1], w[2] - w[0] + 1, w[3] - w[1] + 1) for w in windows)
        assert out_display[:2] == display[:2], f"{what}: the display origin stays where it was (as oiiotool)"
        exact, mag = ref.windowed_resize(_picture(data, list(CASES).index(name)), data, display, out_data,
                                         out_display, "lanczos3")
        scale_of = np.maximum(mag, 1e-30)
        assert (np.abs(want - exact) / scale_of).max() <= OIIO_RTOL, f"{what}: the reference is oiiotool's resize"
        got = _rgba(got_planes)
        err = np.abs(got - exact) / scale_of
        if name == "overscan":
            # OIIO reads a tap beyond the data window at its position clamped to the display window on both
            # axes, so beyond the display window a row's taps can jump to another column; oxi clamps each axis
            # on its own. Within the display window the two readings agree (README, differences from oiiotool).
            inside = _inside(out_data, out_display)
            err = err[inside]
        assert err.max() <= 2e-6, what


def _inside(data: tuple, display: tuple) -> np.ndarray:
    """Mask of the data window's pixels that lie inside the display window."""
    ys = data[1] + np.arange(data[3])
    xs = data[0] + np.arange(data[2])
    in_y = (ys >= display[1]) & (ys < display[1] + display[3])
    in_x = (xs >= display[0]) & (xs < display[0] + display[2])
    return in_y[:, None] & in_x[None, :]


def _grown(data: tuple, display: tuple, reach: int) -> tuple[int, int, int, int]:
    """The data window grown by `reach` on each side, stopped at the display window (data past it stays)."""
    ends = []
    for i in (0, 1):
        low = max(data[i] - reach, min(display[i], data[i]))
        high = min(data[i] + data[2 + i] + reach, max(display[i] + display[2 + i], data[i] + data[2 + i]))
        ends.append((low, high))
    return ends[0][0], ends[1][0], ends[0][1] - ends[0][0], ends[1][1] - ends[1][0]


@pytest.mark.parametrize("keep", [False, True], ids=["grown", "kept"])
def test_blur_reads_black_outside_the_data_window_and_grows_it_by_its_reach(each_backend, files: dict[str, Path],
                                                                           tmp_path: Path, keep: bool):
    sigma = 1.7
    out = tmp_path / "oxi"
    res = run_oxi("blur", *map(str, files.values()), "-o", str(out), "--sigma", str(sigma), "--backend",
                  each_backend.name, *(["--keep-window"] if keep else []))
    assert res.returncode == 0, res.stderr
    for name, src in files.items():
        data, display = CASES[name]
        header, planes = read_exr(out / src.name)
        want = data if keep else _grown(data, display, math.ceil(3 * sigma))
        got_data = window(header["dataWindow"])
        assert (got_data[0], got_data[1], got_data[2] - got_data[0] + 1, got_data[3] - got_data[1] + 1) == want
        assert window(header["displayWindow"])[:2] == display[:2]
        exact, mag = ref.windowed_blur(_picture(data, list(CASES).index(name)), data, display, want, sigma)
        err = np.abs(_rgba(planes) - exact) / np.maximum(mag, 1e-30)
        if name == "overscan":  # see the resize test: beyond the display window the readings differ
            err = err[_inside(want, display)]
        assert err.max() <= 2e-6, f"{name} blurred ({'kept' if keep else 'grown'})"


def test_blur_fades_to_black_at_a_data_edge_inside_the_display(files: dict[str, Path], tmp_path: Path):
    out = tmp_path / "soft.exr"
    assert run_oxi("blur", str(files["touching_sides"]), str(out), "--sigma", "2").returncode == 0
    header, planes = read_exr(out)
    alpha = planes["A"]
    assert window(header["dataWindow"]) == (0, 7, 199, 115)  # rows 13..109 grown by R = 6, columns at the edge
    assert alpha[0].max() < 0.005  # 3 sigma from the data: the grown rows fade to black, nothing is above
    # where the data meets the display window its edge repeats (as OIIO reads it): alpha, uniform in [0, 1],
    # blurs to about 0.5 in the first column too, where a fade would halve it
    assert alpha[20:-20, 0].mean() > 0.4


@needs_oiiotool
def test_every_part_is_resized_under_one_display_window_as_oiiotool(tmp_path: Path):
    display = (0, 0, 2048, 1556)
    left, right = (654, 245, 877, 876), (655, 245, 876, 877)  # stereo eyes with their own data windows
    src = _write(tmp_path / "stereo.exr", [(left, display, _picture(left, 1)), (right, display, _picture(right, 2))])
    out = tmp_path / "half.exr"
    res = run_oxi("resize", str(src), str(out), "--scale", "50%", "--filter", "lanczos3")
    assert res.returncode == 0, res.stderr
    want = tmp_path / "oiio.exr"
    subprocess.run([OIIOTOOL, "-a", str(src), "--resize:filter=lanczos3", "50%", "-o", str(want)], check=True,
                   capture_output=True)
    got_parts, want_parts = read_exr_parts(out), read_exr_parts(want)
    for (_, got, _), (_, wanted, _) in zip(got_parts, want_parts, strict=True):
        assert window(got["displayWindow"]) == (0, 0, 1023, 777)  # 50% of 2048x1556 for every part
        assert window(got["dataWindow"]) == window(wanted["dataWindow"])
    assert window(got_parts[0][1]["dataWindow"]) == (327, 122, 765, 559)  # 439x438 at (327, 122), as oiiotool


def _fitted(picture: np.ndarray, data: tuple, display: tuple, box: tuple[int, int], mode: str) -> tuple:
    """Float64 --fit of the display window's picture into `box`, and Σ|w|·|v|: fit gives the picture alone,
    pad and fill the box (the picture at its offset, bars of 0, the overflow cut)."""
    from oxi_cli.ops.resize import fit_frame

    f = fit_frame(display[2], display[3], *box, mode)
    whole = (0, 0, f.width, f.height)
    exact, mag = ref.windowed_resize(picture, data, display, whole, whole, "lanczos3")
    if mode == "fit":
        return exact, mag
    placed = np.zeros((2, box[1], box[0], 4))
    ys, xs = slice(max(f.y, 0), min(f.y + f.height, box[1])), slice(max(f.x, 0), min(f.x + f.width, box[0]))
    inner = (slice(ys.start - f.y, ys.stop - f.y), slice(xs.start - f.x, xs.stop - f.x))
    placed[0][ys, xs], placed[1][ys, xs] = exact[inner], mag[inner]
    return placed[0], placed[1]


@needs_oiiotool
@pytest.mark.parametrize("mode", ["fit", "pad", "fill"])
def test_fit_places_the_display_windows_picture_as_oiiotool(files: dict[str, Path], tmp_path: Path, mode: str):
    """A box is fitted with the display window's picture (black where the data window has no pixels), as
    oiiotool's --fit, not with the data window's pixels alone."""
    for name in ("inside", "odd_offset"):
        data, display = CASES[name]
        src, out, want_path = files[name], tmp_path / f"{name}_{mode}.exr", tmp_path / f"oiio_{name}_{mode}.exr"
        res = run_oxi("resize", str(src), str(out), "--size", "101x77", "--fit", mode, "--filter", "lanczos3")
        assert res.returncode == 0, res.stderr
        options = _oiio_options(mode, display[2:], (101, 77))
        subprocess.run([OIIOTOOL, str(src), f"--fit:filter=lanczos3{options}", "101x77", "-o", str(want_path)],
                       check=True, capture_output=True)
        (got_header, got), (want_header, want) = read_exr(out), read_exr(want_path)
        for key in ("dataWindow", "displayWindow"):
            assert window(got_header[key]) == window(want_header[key]), f"{name} {mode} {key}"
        exact, mag = _fitted(_picture(data, list(CASES).index(name)), data, display, (101, 77), mode)
        scale = np.maximum(mag, 1e-30)
        assert (np.abs(_rgba(want) - exact) / scale).max() <= OIIO_RTOL, f"{name} {mode}: the reference is oiiotool's"
        assert (np.abs(_rgba(got) - exact) / scale).max() <= 2e-6, f"{name} {mode}"


@needs_oiiotool
def test_parts_with_their_own_data_windows_fit_into_one_box_as_oiiotool(tmp_path: Path):
    display = (0, 0, 400, 300)
    left, right = (60, 40, 201, 150), (61, 41, 199, 150)
    src = _write(tmp_path / "stereo.exr", [(left, display, _picture(left, 3)), (right, display, _picture(right, 4))])
    out, want = tmp_path / "box.exr", tmp_path / "oiio.exr"
    res = run_oxi("resize", str(src), str(out), "--size", "90x60", "--fit", "pad", "--filter", "lanczos3")
    assert res.returncode == 0, res.stderr
    subprocess.run([OIIOTOOL, "-a", str(src), "--fit:filter=lanczos3:pad=1:allsubimages=1", "90x60", "-o",
                    str(want)], check=True, capture_output=True)
    for (_, got, _), (_, wanted, _) in zip(read_exr_parts(out), read_exr_parts(want), strict=True):
        for key in ("dataWindow", "displayWindow"):
            assert window(got[key]) == window(wanted[key]) == (0, 0, 89, 59)
    for (data, seed), (*_, got_planes), (*_, want_planes) in zip(((left, 3), (right, 4)), read_exr_parts(out),
                                                                  read_exr_parts(want), strict=True):
        exact, mag = _fitted(_picture(data, seed), data, display, (90, 60), "pad")
        scale = np.maximum(mag, 1e-30)
        assert (np.abs(_rgba(want_planes) - exact) / scale).max() <= OIIO_RTOL
        assert (np.abs(_rgba(got_planes) - exact) / scale).max() <= 2e-6
