"""The resize filters, one table: each name's half-width and weight function, as OpenImageIO's filter.cpp."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np  # annotations only: numpy loads when a weight is computed, not for `oxi --help`


@dataclass(frozen=True)
class Filter:
    """A separable filter: `radius`, its half-width in source pixels at scale 1 (half of OIIO's width), and
    `weight(d)`, its value at float64 distances `d` in those units (zero outside the radius).

    `edge`: for a filter that stops with a step at its radius (box, the gaussians), its value just inside. A tap
    lying exactly on the radius (box 1080 -> 720, gaussian 53 -> 52) counts or not by a rounding: oxi decides
    it as oiiotool's float32 arithmetic does, `closed` saying whether OIIO's test is <= (box) or < (the rest).
    """

    radius: float
    weight: Callable[[np.ndarray], np.ndarray]
    about: str
    edge: float | None = None
    closed: bool = False


def _box(d: np.ndarray) -> np.ndarray:
    import numpy as np

    return (np.abs(d) <= 0.5).astype(np.float64)


def _triangle(d: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.maximum(0.0, 1.0 - np.abs(d))


def _gaussian(sharpness: float, radius: float) -> Callable[[np.ndarray], np.ndarray]:
    """OIIO's gaussians: exp(-k x²) with x the distance over the radius, cut at the radius."""

    def weight(d: np.ndarray) -> np.ndarray:
        import numpy as np

        x = np.abs(d) / radius
        return np.where(x < 1.0, np.exp(-sharpness * x * x), 0.0)

    return weight


def _blackman_harris(d: np.ndarray) -> np.ndarray:
    """The 4-term Blackman-Harris window (Harris 1978) spanning the radius 1.5 (OIIO's width 3)."""
    import numpy as np

    t = (np.abs(d) / 1.5 + 1.0) * 0.5  # 0.5 at the centre, 1 at the radius
    w = 0.35875 - 0.48829 * np.cos(2 * np.pi * t) + 0.14128 * np.cos(4 * np.pi * t) - 0.01168 * np.cos(6 * np.pi * t)
    return np.where(np.abs(d) <= 1.5, w, 0.0)


def _sinc(d: np.ndarray) -> np.ndarray:
    """sin(πx)/(πx) cut at 2, no window (OIIO's sinc, width 4)."""
    import numpy as np

    return np.where(np.abs(d) <= 2.0, np.sinc(d), 0.0)


def _lanczos3(d: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.where(np.abs(d) < 3.0, np.sinc(d) * np.sinc(d / 3.0), 0.0)


def _bc_cubic(b: float, c: float) -> Callable[[np.ndarray], np.ndarray]:
    """Mitchell-Netravali's family: catmull-rom is B=0, C=1/2; mitchell B=C=1/3; the cubic B-spline B=1, C=0."""

    def weight(d: np.ndarray) -> np.ndarray:
        import numpy as np

        a = np.abs(d)
        near = ((12 - 9 * b - 6 * c) * a**3 + (-18 + 12 * b + 6 * c) * a**2 + (6 - 2 * b)) / 6.0
        far = ((-b - 6 * c) * a**3 + (6 * b + 30 * c) * a**2 + (-12 * b - 48 * c) * a + (8 * b + 24 * c)) / 6.0
        return np.where(a < 1.0, near, np.where(a < 2.0, far, 0.0))

    return weight


def _keys_cubic(a: float) -> Callable[[np.ndarray], np.ndarray]:
    """Keys' cubic convolution with parameter `a` (OIIO's cubic a=0, keys -1/2, simon -3/4, rifman -1)."""

    def weight(d: np.ndarray) -> np.ndarray:
        import numpy as np

        x = np.abs(d)
        near = (a + 2.0) * x**3 - (a + 3.0) * x**2 + 1.0
        far = a * x**3 - 5.0 * a * x**2 + 8.0 * a * x - 4.0 * a
        return np.where(x < 1.0, near, np.where(x <= 2.0, far, 0.0))

    return weight


# oiiotool's `--resize:filter=` names (OIIO's separable 2D filters, filter.cpp's filter2d_list), widths as OIIO
# gives them (radius = width / 2). Left out: `disk` and `radial-lanczos3`, which are not separable (oxi's resize
# runs rows then columns on both backends).
FILTERS: dict[str, Filter] = {
    "lanczos3": Filter(3.0, _lanczos3, "3-lobed Lanczos (sinc windowed by sinc), radius 3; oiiotool's when reducing"),
    "blackman-harris": Filter(1.5, _blackman_harris, "4-term Blackman-Harris window, radius 1.5; oiiotool's when "
                              "enlarging", edge=0.35875 - 0.48829 + 0.14128 - 0.01168, closed=True),
    "catmull-rom": Filter(2.0, _bc_cubic(0.0, 0.5), "interpolating cubic (B=0, C=1/2), radius 2"),
    "mitchell": Filter(2.0, _bc_cubic(1 / 3, 1 / 3), "Mitchell-Netravali cubic (B=C=1/3), radius 2"),
    "bspline": Filter(2.0, _bc_cubic(1.0, 0.0), "cubic B-spline (B=1, C=0), smooth, radius 2"),
    "cubic": Filter(2.0, _keys_cubic(0.0), "Keys cubic a=0 (zero past 1), radius 2"),
    "keys": Filter(2.0, _keys_cubic(-0.5), "Keys cubic a=-1/2 (Catmull-Rom's shape), radius 2"),
    "simon": Filter(2.0, _keys_cubic(-0.75), "Keys cubic a=-3/4, radius 2"),
    "rifman": Filter(2.0, _keys_cubic(-1.0), "Keys cubic a=-1, radius 2"),
    "gaussian": Filter(1.5, _gaussian(2.0, 1.5), "exp(-2 (x/1.5)^2), radius 1.5", edge=math.exp(-2.0)),
    "sharp-gaussian": Filter(1.0, _gaussian(4.0, 1.0), "exp(-4 x^2), radius 1", edge=math.exp(-4.0)),
    "sinc": Filter(2.0, _sinc, "sin(pi x)/(pi x) unwindowed, radius 2"),
    "nuke-lanczos6": Filter(3.0, _lanczos3, "lanczos3 under Nuke's name (its full width, 6)"),
    "triangle": Filter(1.0, _triangle, "linear, radius 1"),
    "box": Filter(0.5, _box, "nearest-style average, radius 1/2", edge=1.0, closed=True),
}
FILTER_NAMES = tuple(FILTERS)
# What oiiotool's resize takes when given no filter (OIIO's get_resize_filter): blackman-harris when either side
# grows, lanczos3 otherwise.
ENLARGING, REDUCING = "blackman-harris", "lanczos3"
DEFAULT_HELP = f"{ENLARGING} when a side grows, else {REDUCING} (as oiiotool)"


def default_filter(src: tuple[int, int], dst: tuple[int, int]) -> str:
    """oiiotool's filter for a resize given none: blackman-harris when either side grows, else lanczos3."""
    return ENLARGING if dst[0] > src[0] or dst[1] > src[1] else REDUCING


def filter_radius(name: str) -> float:
    return FILTERS[name].radius


def filter_reach(name: str, stretch: float) -> float:
    """How far from an output's centre taps are gathered, in source pixels: the stretched radius, and a hair more
    for a filter with a step at its edge, whose tap exactly there may count (tap_weights decides)."""
    f = FILTERS[name]
    return f.radius * stretch * (1.0 + 1e-9 if f.edge is not None else 1.0)


def filter_weight(name: str, d: np.ndarray) -> np.ndarray:
    """The named filter evaluated at distances `d` (float64, in filter units: source pixels at scale 1)."""
    return FILTERS[name].weight(d)


def tap_weights(name: str, pos: np.ndarray, center: np.ndarray, src: tuple[int, int], dst: tuple[int, int]
                ) -> np.ndarray:
    """Unnormalised float64 weights of source taps `pos` (dst, taps) for outputs sampling source `center` (dst,)
    along one axis whose display windows are `src` and `dst` (start counted from the first data pixel, length):
    the filter stretched by the length ratio when reducing; a tap on the edge of a filter that stops with a step
    there weighs as oiiotool's float32 test of it says."""
    import numpy as np

    f = FILTERS[name]
    stretch = max(1.0, src[1] / dst[1])
    d = (pos - center[:, None]) / stretch
    w = f.weight(d)
    if f.edge is None:
        return w
    on_edge = np.abs(np.abs(d) - f.radius) <= 1e-9 * f.radius
    if not on_edge.any():
        return w
    return np.where(on_edge, np.where(_oiio_inside(f, pos, src, dst), f.edge, 0.0), w)


def _oiio_inside(f: Filter, pos: np.ndarray, src: tuple[int, int], dst: tuple[int, int]) -> np.ndarray:
    """Whether OIIO's resize gives each tap a weight: its float32 arithmetic (imagebufalgo_xform.cpp resize_:
    the output's NDC centre on the display window mapped to source pixels, the tap's distance scaled to output
    pixels, compared with the filter's width there)."""
    import numpy as np

    f32 = np.float32
    (s0, sl), (d0, dl) = src, dst
    ratio = f32(dl) / f32(sl)
    width = f32(2.0 * f.radius) * max(f32(1.0), ratio)
    x = np.arange(pos.shape[0], dtype=f32) - f32(d0)
    src_xf = ((x + f32(0.5)) * (f32(1.0) / f32(dl))) * f32(sl)
    floor = np.floor(src_xf)
    frac = src_xf - floor
    offset = (pos - s0 - floor.astype(np.int64)[:, None]).astype(f32)
    d = np.abs(ratio * (offset - (frac - f32(0.5))[:, None]))
    if f.closed:
        return d <= width * f32(0.5)
    return d * (f32(2.0) / width) < f32(1.0)


def check_filter(name: object) -> str | None:
    """None when `name` is a filter, else the line saying which names are (the caller raises its own error)."""
    if isinstance(name, str) and name in FILTERS:
        return None
    text = repr(name) if len(repr(name)) <= 40 else repr(name)[:37] + "..."
    near = _closest(str(name))
    hint = f" (did you mean {near}?)" if near else ""
    return f"unknown filter {text}{hint}; choose one of {', '.join(FILTERS)}"


def _closest(name: str) -> str | None:
    import difflib

    aliases = {"catrom": "catmull-rom", "lanczos": "lanczos3", "b-spline": "bspline"}
    if name.lower() in aliases:
        return aliases[name.lower()]
    found = difflib.get_close_matches(name.lower(), FILTERS, n=1, cutoff=0.6)
    return found[0] if found else None

