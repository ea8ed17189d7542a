"""--fit fit, pad, fill and stretch as oiiotool's --fit: the same data and display windows, the same pixels
within resize tolerance, bars of 0 in every channel; outputs without windows (PNG) hold the whole box, as
oiiotool writes them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from oxi_cli.ops.resize import fit_frame
from tests import reference as ref
from tests.cli.conftest import hdr_rgba, read_exr, run_oxi, write_exr
from tests.oiio_tools import OIIOTOOL, needs_oiiotool

# Measured with oiiotool 3.2.2 (--fit, and --fit:fillmode=<the side that overflows> for fill's picture before
# the crop --fit:pad=1 makes): (source, box) -> mode -> (picture width, height, data-window x, y); the display
# window is the box at (0, 0). Odd margins: the extra pixel goes below/right of a bar, below/right of a cut.
FIGURES = {
    ((4096, 2160), (1920, 1080)): {"fit": (1920, 1013, 0, 33), "fill": (2048, 1080, -64, 0)},
    ((1000, 1000), (1920, 1080)): {"fit": (1080, 1080, 420, 0), "fill": (1920, 1920, 0, -420)},
    ((1920, 1080), (1000, 1000)): {"fit": (1000, 563, 0, 218), "fill": (1778, 1000, -389, 0)},
    ((4096, 2160), (1000, 1000)): {"fit": (1000, 527, 0, 236), "fill": (1896, 1000, -448, 0)},
    ((4096, 2160), (1001, 777)): {"fit": (1001, 528, 0, 124), "fill": (1473, 777, -236, 0)},
    ((1920, 1080), (1001, 777)): {"fit": (1001, 563, 0, 107), "fill": (1381, 777, -190, 0)},
    ((1000, 1000), (1001, 777)): {"fit": (777, 777, 112, 0), "fill": (1001, 1001, 0, -112)},
    ((1000, 1000), (1000, 777)): {"fit": (777, 777, 111, 0), "fill": (1000, 1000, 0, -111)},
    ((1000, 1000), (777, 1000)): {"fit": (777, 777, 0, 111), "fill": (1000, 1000, -111, 0)},
}


@pytest.mark.parametrize(("src", "box"), list(FIGURES))
def test_fit_and_fill_frames_equal_oiiotools_figures(src, box):
    for mode, want in FIGURES[(src, box)].items():
        f = fit_frame(*src, *box, mode)
        assert (f.width, f.height, f.x, f.y) == want, mode
        assert fit_frame(*src, *box, "pad") == fit_frame(*src, *box, "fit")


# Small plates with the same kinds of aspect (wider, taller, square, the box's own) and odd remainders.
SOURCES = {"wide": (400, 211), "tall": (211, 400), "square": (100, 100), "hd": (192, 108)}
BOXES = ["192x108", "101x77", "77x101"]
# oiiotool's own lanczos3 --resize (with or without --fit) on these HDR plates lies up to 4.2e-4 of Σ|w|·|v| from
# the float64 resize (float32 tap positions and weights; measured, same for plain --resize), oxi within 3e-7.
OIIO_RTOL = 5e-4
OIIO_FIT = {"fit": "", "pad": ":pad=1"}  # fill: the fillmode that overflows, then pad=1 crops to the box


def _oiio_options(mode: str, src: tuple[int, int], box: tuple[int, int]) -> str:
    if mode in OIIO_FIT:
        return OIIO_FIT[mode]
    wider_box = box[0] * src[1] >= src[0] * box[1]  # OIIO compares the aspects in float32: none of these tie
    return f":fillmode={'width' if wider_box else 'height'}:pad=1"


def _windows(header: dict) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(tuple(int(v) for p in header[k] for v in p) for k in ("dataWindow", "displayWindow"))


def _rgba(planes: dict[str, np.ndarray]) -> np.ndarray:
    if "RGBA" in planes:  # oiiotool's files read back interleaved
        return planes["RGBA"].astype(np.float64)
    return np.stack([planes[c] for c in "RGBA"], axis=-1).astype(np.float64)


def _placed(values: np.ndarray, frame, box: tuple[int, int]) -> np.ndarray:
    """A resized picture's values where the output holds them: at the frame's offset in a box of zeros."""
    out = np.zeros((box[1], box[0], values.shape[2]))
    ys, xs = np.arange(box[1]) - frame.y, np.arange(box[0]) - frame.x
    ry, rx = (ys >= 0) & (ys < frame.height), (xs >= 0) & (xs < frame.width)
    out[np.ix_(ry, rx)] = values[np.ix_(ys[ry], xs[rx])]
    return out


def _check_pixels(got: np.ndarray, want: np.ndarray, src: np.ndarray, frame, what: str, step: float = 0.0) -> None:
    """Bars exactly 0 in both; oxi within 1e-6 of the float64 lanczos3 resize and oiiotool within OIIO_RTOL of
    it, both relative to Σ|w|·|v| (the scale a float32 resize's rounding has). `step`: integer files, whose
    values are clipped to 0..1 and rounded to a step (clipping never widens a difference)."""
    exact, mag = ref.resize(src, frame.width, frame.height, "lanczos3")
    box = got.shape[1::-1]
    exact, scale = _placed(exact, frame, box), np.maximum(1.0, _placed(mag, frame, box))
    if step:
        exact = np.clip(exact, 0.0, 1.0)
    bars = _placed(np.ones((frame.height, frame.width, 1)), frame, box)[..., 0] == 0
    assert not got[bars].any() and not want[bars].any(), f"{what}: bars are 0 in every channel"
    assert ((np.abs(got - exact) - step) / scale).max() <= 1e-6, what
    assert ((np.abs(want - exact) - step) / scale).max() <= OIIO_RTOL, what


@pytest.fixture(scope="module")
def plates(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("fit_sources")
    return {name: write_exr(folder / f"{name}.exr", hdr_rgba(h, w, seed=w), half=False, aovs=False)
            for name, (w, h) in SOURCES.items()}


@needs_oiiotool
@pytest.mark.parametrize("mode", ["fit", "pad", "fill"])
@pytest.mark.parametrize("box", BOXES)
def test_windows_and_pixels_equal_oiiotools_fit(plates: dict[str, Path], tmp_path: Path, box: str, mode: str):
    out = tmp_path / "oxi"
    res = run_oxi("resize", *map(str, plates.values()), "-o", str(out), "--size", box, "--fit", mode,
                  "--filter", "lanczos3", "--out-type", "float")
    assert res.returncode == 0, res.stderr
    bw, bh = map(int, box.split("x"))
    for name, src in plates.items():
        ref_path = tmp_path / f"oiio_{name}.exr"
        options = _oiio_options(mode, SOURCES[name], (bw, bh))
        subprocess.run([OIIOTOOL, str(src), f"--fit:filter=lanczos3{options}", box, "-d", "float", "-o",
                        str(ref_path)], check=True, capture_output=True)
        want_header, want_planes = read_exr(ref_path)
        got_header, got_planes = read_exr(out / src.name)
        assert _windows(got_header) == _windows(want_header), f"{name} -> {box} {mode}"
        got, want = _rgba(got_planes), _rgba(want_planes)
        assert got.shape == want.shape, f"{name} -> {box} {mode}"
        frame = fit_frame(*SOURCES[name], bw, bh, mode)
        if mode == "fit":  # the pixels are the picture alone
            frame = type(frame)(frame.width, frame.height, 0, 0, frame.width, frame.height)
        _check_pixels(got, want, _rgba(read_exr(src)[1]), frame, f"{name} -> {box} {mode}")


@needs_oiiotool
@pytest.mark.parametrize("mode", ["fit", "pad"])
def test_a_fitted_png_holds_the_box_as_oiiotool_writes_it(plates: dict[str, Path], tmp_path: Path, mode: str):
    from oxi_cli.io import read_image  # Pillow reads a 16-bit RGBA PNG as 8-bit (NOTES §4)

    src = plates["wide"]
    got_path, want_path = tmp_path / "oxi.png", tmp_path / "oiio.png"
    res = run_oxi("resize", str(src), str(got_path), "--size", "101x77", "--fit", mode)
    assert res.returncode == 0, res.stderr
    # oiiotool divides colour by alpha when it writes a PNG unless told the pixels are unassociated already;
    # oxi never (un)premultiplies (NOTES §1), so ask oiiotool to write the values as they are.
    subprocess.run([OIIOTOOL, str(src), "--fit:filter=lanczos3", "101x77", "-d", "uint16", "--attrib",
                    "oiio:UnassociatedAlpha", "1", "-o", str(want_path)], check=True, capture_output=True)
    got, want = (np.stack(list(read_image(p).planes.values()), -1) / 65535 for p in (got_path, want_path))
    assert got.shape == want.shape == (77, 101, 4)
    frame = fit_frame(*SOURCES["wide"], 101, 77, "pad")
    _check_pixels(got, want, _rgba(read_exr(src)[1]), frame, f"png {mode}", step=0.5 / 65535)


def test_stretch_fills_the_box_and_scales_the_windows(plates: dict[str, Path], tmp_path: Path):
    out = tmp_path / "stretch.exr"
    assert run_oxi("resize", str(plates["wide"]), str(out), "--size", "101x77", "--fit", "stretch").returncode == 0
    header, planes = read_exr(out)
    assert _windows(header) == ((0, 0, 100, 76), (0, 0, 100, 76))
    assert _rgba(planes).shape == (77, 101, 4)


def test_a_later_blur_grows_a_fits_data_window_by_its_reach_or_keeps_it_when_asked(plates: dict[str, Path],
                                                                                    tmp_path: Path):
    out = tmp_path / "blurred.exr"
    res = run_oxi("run", str(plates["wide"]), str(out), "--resize", "192x108", "--blur", "1")
    assert res.returncode == 0, res.stderr
    assert _windows(read_exr(out)[0]) == ((0, 0, 191, 106), (0, 0, 191, 107))  # rows 3..103 grow by R = 3
    res = run_oxi("run", str(plates["wide"]), str(out), "--resize", "192x108", "--blur:keep_window=1", "1",
                  "--overwrite")
    assert res.returncode == 0, res.stderr
    assert _windows(read_exr(out)[0]) == ((0, 3, 191, 103), (0, 0, 191, 107))
