"""Separable resize as a transform of the display window, black outside the data window (as oiiotool)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from oxi_cli.errors import OpError, UsageError
from oxi_cli.ops.base import AxisStep, Box, ImageOp
from oxi_cli.ops.filters import (
    DEFAULT_HELP,
    FILTER_NAMES,
    check_filter,
    default_filter,
    filter_radius,
    filter_reach,
    tap_weights,
)
from oxi_cli.ops.place import Place
from oxi_cli.ops.step import FLAG, Deferred, Param, Step, StepArgs, choices

if TYPE_CHECKING:
    import numpy as np  # annotations only: numpy loads when a function here runs, not for `oxi --help`

MAX_DIM = 1 << 20
# Beyond these a resize is almost always a typo (`--resize 50` meant as 50 %): ask for --force.
MAX_UPSCALE = 8
MAX_SIDE = 32768
FIT_MODES = ("fit", "fill", "pad", "stretch")
FIT_DEFAULT = "fit"
SIZE_SYNTAX = "WxH (1920x1080), one side with 0 keeping the aspect (1920x0, 0x1080), or a percentage (50%)"


@dataclass(frozen=True)
class Resize(ImageOp):
    """Resample every channel to width x height with the named filter."""

    width: int
    height: int
    filter: str = "lanczos3"  # a name of ops/filters.py (ResizeStep picks oiiotool's default by direction)
    # For one band or tile of a larger resize (set by the planner): per axis (full source size, full output
    # size, first source index the piece holds, first output index it makes), so the piece uses the whole
    # image's weights and equals a single pass bit for bit. None: this op is the whole resize.
    rows: tuple[int, int, int, int] | None = None
    cols: tuple[int, int, int, int] | None = None
    # Where the picture sits (`--fit` of a WxH box): (box width, box height, x, y), the data window's origin
    # inside a display window of the box's size. None: both windows scale with the size (as --resize).
    frame: tuple[int, int, int, int] | None = None
    # The resize as a transform of windows (rows axis, columns axis; see Axis), and the output display window
    # it makes. None: the pixels alone are resized, as if data and display windows were one.
    grid: tuple[Axis, Axis] | None = None
    display: Box | None = None
    name: ClassVar[str] = "resize"

    def __post_init__(self) -> None:
        if problem := check_filter(self.filter):
            raise OpError(problem)
        for label, v in (("width", self.width), ("height", self.height)):
            if int(v) != v or not 1 <= v <= MAX_DIM:
                raise OpError(f"resize {label} must be an integer in 1..{MAX_DIM}, got {v}")

    def out_size(self, width: int, height: int) -> tuple[int, int]:
        return self.width, self.height

    def axis_step(self, axis: int, size: int) -> AxisStep:
        return _axis_step(self.taps(axis), size, self.height if axis == 0 else self.width)

    def piece(self, rows: tuple[int, ...], cols: tuple[int, ...]) -> Resize:
        """The piece's output size, and where it lies in the whole resize so it uses the image's weights."""
        return replace(
            self, width=cols[4] - cols[3], height=rows[4] - rows[3], rows=tuple(rows[:4]), cols=tuple(cols[:4])
        )

    def work(self, width: int, height: int, channels: int) -> float:
        taps_y = 2 * self.support(height, self.height) + 1
        taps_x = 2 * self.support(width, self.width) + 1
        return float(channels) * (self.width * height * taps_x + self.width * self.height * taps_y)

    def sample(self) -> Resize:
        return replace(self, width=2, height=2, rows=None, cols=None, grid=None, display=None)

    def windows(self, data: Box, display: Box) -> tuple[Box, Box]:
        """With a grid: the display window it was made for, the data window where the grid puts the pixels
        (a fit's frame: the picture placed in the box, at the box's origin); without, both scale."""
        if self.grid is None or self.display is None:
            return super().windows(data, display)
        rows, cols = self.grid
        out = (self.display[0] - cols.dst_display[0], self.display[1] - rows.dst_display[0], self.width, self.height)
        if self.frame is None:
            return out, self.display
        box_w, box_h, x, y = self.frame
        return (self.display[0] + x, self.display[1] + y, self.width, self.height), (
            self.display[0], self.display[1], box_w, box_h)

    def for_part(self, first: Windows, part: Windows) -> ImageOp:
        """The same display transform for another part of the file (its own data window mapped through it),
        so every part keeps its place under one display window."""
        if self.grid is None or self.display is None or self.rows is not None:
            return super().for_part(first, part)
        size = (self.display[2], self.display[3])
        if self.frame is not None:
            size = (self.width, self.height)
        return displayed_resize(part, size, self.filter, frame=self.frame, box=self.display)

    def weights(self, axis: int, src: int, dst: int) -> AxisWeights:
        """Taps and weights for axis 0 (rows) or 1 (columns) of a `src` -> `dst` pixel piece; every backend
        resizes with these."""
        window = self.rows if axis == 0 else self.cols
        if window is None:
            return image_weights(self.taps(axis), src, dst)
        return window_weights(self.taps(axis), window[:2], window[2:], (src, dst))

    def taps(self, axis: int) -> Taps:
        """What decides this axis' taps besides its sizes (a cache key: ops with equal taps share tables)."""
        return Taps(self.filter, self.grid[axis] if self.grid is not None else None)

    def support(self, src: int, dst: int) -> float:
        """Filter half-width in source pixels for one axis (stretched when shrinking)."""
        return filter_radius(self.filter) * max(1.0, src / dst)


@dataclass(frozen=True)
class AxisWeights:
    """Per output pixel: `count` taps at source indices `index[:, :count]` (taps on black, outside the data
    window, are left out) with their `weight`s; zero past count."""

    index: np.ndarray  # (dst, taps) int32, in [0, src-1]
    weight: np.ndarray  # (dst, taps) float32, zero past count
    count: np.ndarray  # (dst,) int32, 0 where every tap falls on black


@dataclass(frozen=True)
class Axis:
    """One axis of a resample as a transform of the display window: the input's display window as (start,
    length) counted from the input's first data pixel, the output's from the output's. Output pixel o samples
    the input at (o - dst_start + 0.5) * src_length / dst_length + src_start - 0.5 (as OIIO's resize)."""

    src_display: tuple[int, int]
    dst_display: tuple[int, int]


@dataclass(frozen=True)
class Taps:
    """What decides an axis' taps besides its sizes: a filter (or a Gaussian of `sigma` pixels, a blur) and
    the axis' windows (None: data and display windows are one)."""

    filter: str
    axis: Axis | None = None
    sigma: float = 0.0


def axis_weights(taps: Taps | str, src: int, dst: int) -> AxisWeights:
    """Tap indices and weights mapping `src` data pixels onto `dst` along one axis.

    Weights are normalised over every tap the filter covers; then, as OIIO reads around a data window, a tap
    outside the data window is clamped to the display window and is black (left out, so the result fades
    to 0) unless that lands on a data pixel: the edge repeats where data and display edges meet.
    """
    import numpy as np

    taps = Taps(taps) if isinstance(taps, str) else taps
    (s0, sl), (d0, dl) = (taps.axis.src_display, taps.axis.dst_display) if taps.axis else ((0, src), (0, dst))
    scale = sl / dl
    center = (np.arange(dst, dtype=np.float64) - d0 + 0.5) * scale + s0 - 0.5
    support = float(math.ceil(3.0 * taps.sigma)) if taps.sigma else filter_reach(taps.filter, max(1.0, scale))
    first = np.ceil(center - support).astype(np.int64)
    last = np.floor(center + support).astype(np.int64)
    pos = first[:, None] + np.arange(int((last - first).max()) + 1)[None, :]
    inside = pos <= last[:, None]
    if taps.sigma:
        d = pos - center[:, None]
        w = np.where(inside, np.exp(-(d * d) / (2.0 * taps.sigma * taps.sigma)), 0.0)
    else:
        w = np.where(inside, tap_weights(taps.filter, pos, center, (s0, sl), (d0, dl)), 0.0)
    total = w.sum(axis=1, keepdims=True)
    # A filter can miss every tap only for degenerate box cases; fall back to the nearest pixel.
    empty = total[:, 0] == 0.0
    if empty.any():
        w[empty] = 0.0
        w[empty, 0] = 1.0
        pos[empty, 0] = np.rint(center[empty]).astype(np.int64)
        inside[empty] = False
        inside[empty, 0] = True
        total[empty] = 1.0
    w /= total
    return _live_taps(pos, w, inside, src, (s0, s0 + sl), center)


def _live_taps(pos: np.ndarray, w: np.ndarray, inside: np.ndarray, src: int, display: tuple[int, int],
               center: np.ndarray) -> AxisWeights:
    """The taps that read data pixels, in ascending source order; the others (black) dropped."""
    import numpy as np

    held = (pos >= 0) & (pos < src)
    mapped = np.where(held, pos, np.clip(pos, display[0], display[1] - 1))
    live = inside & (mapped >= 0) & (mapped < src)
    order = np.argsort(np.where(live, mapped, np.iinfo(np.int64).max), axis=1, kind="stable")
    mapped, w, live = (np.take_along_axis(a, order, axis=1) for a in (mapped, w, live))
    count = live.sum(axis=1)
    width = max(1, int(count.max()))
    mapped, w, live = mapped[:, :width], np.where(live, w, 0.0)[:, :width], live[:, :width]
    # Dead slots repeat the last live index (a row with none: the nearest pixel), so every index is a pixel
    # and index[:, count - 1] is each row's highest.
    rows = np.arange(pos.shape[0])
    filler = np.where(count > 0, mapped[rows, np.maximum(count - 1, 0)], np.clip(np.rint(center), 0, src - 1))
    index = np.where(live, mapped, filler[:, None].astype(np.int64))
    return AxisWeights(index=index.astype(np.int32), weight=w.astype(np.float32), count=count.astype(np.int32))


@lru_cache(maxsize=32)
def image_weights(taps: Taps | str, src: int, dst: int) -> AxisWeights:
    """axis_weights for a whole axis, computed once per process (every band slices the same arrays)."""
    return axis_weights(taps, src, dst)


def window_weights(
    taps: Taps | str, full: tuple[int, int], start: tuple[int, int], size: tuple[int, int]
) -> AxisWeights:
    """Weights of outputs [start[1], start[1] + size[1]) of a full[0] -> full[1] resize, with tap indices
    relative to an input band starting at row start[0] and size[0] rows long (clamped into it: only
    outputs a band crops away can reach past its ends)."""
    import numpy as np

    ax = image_weights(taps, *full)
    rows = slice(start[1], start[1] + size[1])
    return AxisWeights(
        index=np.ascontiguousarray(np.clip(ax.index[rows] - start[0], 0, size[0] - 1), dtype=np.int32),
        weight=np.ascontiguousarray(ax.weight[rows]),
        count=np.ascontiguousarray(ax.count[rows]),
    )


@lru_cache(maxsize=32)
def _axis_step(taps: Taps | str, src: int, dst: int) -> AxisStep:
    """The input range each output range reads: suffix minimum of the first tap, prefix maximum of the last."""
    import numpy as np

    ax = image_weights(taps, src, dst)
    first = ax.index[:, 0].astype(np.int64)
    last = ax.index[np.arange(dst), np.maximum(ax.count - 1, 0)].astype(np.int64)
    return AxisStep(src, dst, first=np.minimum.accumulate(first[::-1])[::-1], last=np.maximum.accumulate(last))


Windows = tuple[Box, Box]


def displayed_resize(windows: Windows, size: tuple[int, int], filter: str, *, frame: tuple[int, int, int, int]
                     | None = None, box: Box | None = None) -> Resize:
    """The resize of an image with these (data, display) windows whose display window becomes `size`, at the
    same origin, as oiiotool's --resize: the data window mapped through the same scale, its origin floored
    and its size rounded up. With a fit's `frame` (box w, h, x, y): `size` is the
    picture, computed whole on the display window's grid (black where the data window has no pixels) and
    placed in the box at `box`'s origin."""
    (x, y, w, h), (dx, dy, dw, dh) = windows
    if frame is not None:
        out = (0, 0, size[0], size[1])
    else:  # exact fractions, where oiiotool's float32 can add a pixel (53 * (27 / 53) is 27.000002: 28 wide)
        out = (((x - dx) * size[0]) // dw, ((y - dy) * size[1]) // dh,
               max(1, -(-w * size[0] // dw)), max(1, -(-h * size[1] // dh)))
    rows = Axis((dy - y, dh), (-out[1], size[1]))
    cols = Axis((dx - x, dw), (-out[0], size[0]))
    display = box if box is not None else (dx, dy, size[0], size[1])
    return Resize(out[2], out[3], filter, frame=frame, grid=(rows, cols), display=display)  # type: ignore[arg-type]


# --- the one syntax for sizes and scales: `oxi resize --size/--scale`, `oxi run --resize`, recipes ---------


@dataclass(frozen=True)
class SizeSpec:
    """A resize as written: a pixel size (0 = that side keeps the aspect) or a scale factor."""

    width: int = 0
    height: int = 0
    scale: float | None = None

    def describe(self) -> str:
        return f"{self.scale * 100:g}%" if self.scale is not None else f"{self.width}x{self.height}"


def parse_size(value: object, label: str = "--resize", *, bare_is_scale: bool = False) -> SizeSpec:
    """Read a size or scale as oiiotool's --resize does: `1920x1080`, `1920x0` / `0x1080` (keep the aspect),
    `50%`. A bare number is refused (is `50` 50 % or 50 pixels?) unless the option itself says scale
    (`--scale 0.5`, `bare_is_scale`)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UsageError(f"{label} takes {SIZE_SYNTAX}; got {_short(value)}")
    text = str(value).strip()
    m = re.fullmatch(r"(\d+)\s*[xX]\s*(\d+)", text)
    if m:
        w, h = int(m.group(1)), int(m.group(2))
        if w == 0 and h == 0:
            raise UsageError(f"{label} {text}: give at least one side (0 keeps the aspect of the other)")
        for side in (w, h):
            if side > MAX_DIM:
                raise UsageError(f"{label} {text}: sides are at most {MAX_DIM} pixels")
        return SizeSpec(w, h)
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*(%?)", text)
    if m and (m.group(2) or bare_is_scale):
        number = float(text.rstrip("%").strip())
        scale = number / 100.0 if m.group(2) else number
        if not (math.isfinite(scale) and 0 < scale <= MAX_DIM):
            raise UsageError(f"{label} {text}: a scale must be a positive number")
        return SizeSpec(scale=scale)
    if m:
        number = float(text)
        scale = f"{_percent(number)} for a scale"
        if number < 1 or number != int(number):
            raise UsageError(f"{label} {text} is ambiguous: write {scale} (a bare number is not read as one)")
        width = f"{int(number)}x0 for a width of {int(number)} pixels (the height keeps the aspect)"
        first, second = (width, scale) if number >= 100 else (scale, width)
        raise UsageError(f"{label} {text} is ambiguous: write {first}, or {second}")
    raise UsageError(f"{label} takes {SIZE_SYNTAX}; got {_short(text)}")


def _percent(number: float) -> str:
    """The percentage a bare number most likely meant: 50 -> 50%, 0.5 -> 50%, 1.5 -> 150%."""
    return f"{number:g}%" if number >= 1 and number == int(number) else f"{number * 100:g}%"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_fit(mode: str, label: str = "--fit") -> str:
    if mode not in FIT_MODES:
        raise UsageError(f"{label} must be one of {', '.join(FIT_MODES)}, got {_short(mode)}")
    return mode


@dataclass(frozen=True)
class Frame:
    """Where a resized picture lies in the requested WxH box: the picture's size and its origin in the box
    (the EXR data window, relative to a display window of the box's size). fit and pad: inside, centred,
    with bars; fill: the picture overflows the box and the origin is negative; stretch: the box itself."""

    width: int
    height: int
    x: int
    y: int
    box_width: int
    box_height: int

    def fills_box(self) -> bool:
        return (self.width, self.height, self.x, self.y) == (self.box_width, self.box_height, 0, 0)


def fit_frame(src_w: int, src_h: int, box_w: int, box_h: int, mode: str) -> Frame:
    """The picture size and placement for `mode`, computed as OIIO's ImageBufAlgo::fit does (float32 aspects,
    the scaled side rounded half up, the offset halved toward zero, so an odd margin puts the extra pixel
    below/right of a bar and left/top of an overflow).

    fit / pad: the largest picture with the source's aspect inside the box (oiiotool's fillmode=letterbox);
    fill: the smallest that covers it (fillmode=width or height, whichever overflows); stretch: the box.
    """
    import numpy as np

    if mode == "stretch":
        return Frame(box_w, box_h, 0, 0, box_w, box_h)
    f32 = np.float32
    old, new = f32(src_w) / f32(src_h), f32(box_w) / f32(box_h)
    match_height = bool(new >= old) == (mode != "fill")  # a box at least as wide as the source: match heights
    if match_height:
        w, h = int(f32(box_h) * old + f32(0.5)), box_h
    else:
        w, h = box_w, int(f32(box_w) / old + f32(0.5))
    w, h = max(1, w), max(1, h)
    return Frame(w, h, _half_toward_zero(box_w - w), _half_toward_zero(box_h - h), box_w, box_h)


def _half_toward_zero(n: int) -> int:
    """n / 2 as C's integer division rounds it (toward zero), which is how OIIO centres."""
    return n // 2 if n >= 0 else -(-n // 2)


def resolved_size(spec: SizeSpec, src_w: int, src_h: int) -> tuple[int, int]:
    """The display size a scale or a one-sided size gives a src_w x src_h display window (a WxH box:
    fit_frame), in float32 and rounded half up as oiiotool's --resize computes it."""
    import numpy as np

    f32 = np.float32

    def rounded(v: np.float32) -> int:
        return max(1, int(np.floor(v + f32(0.5))))

    if spec.scale is not None:
        return rounded(f32(src_w) * f32(spec.scale)), rounded(f32(src_h) * f32(spec.scale))
    if spec.width:
        return spec.width, rounded(f32(spec.width) * f32(src_h) / f32(src_w))
    return rounded(f32(spec.height) * f32(src_w) / f32(src_h)), spec.height


def check_growth(src: tuple[int, int], out: tuple[int, int], force: bool, hint: str) -> None:
    """An upscale beyond 8x on a side, or a side over 32768 pixels, needs `force` (one line otherwise)."""
    if force:
        return
    factor = max(out[0] / src[0], out[1] / src[1])
    if factor > MAX_UPSCALE or max(out) > MAX_SIDE:
        raise UsageError(
            f"resize {src[0]}x{src[1]} -> {out[0]}x{out[1]} is a {factor:.3g}x upscale; beyond "
            f"{MAX_UPSCALE}x or {MAX_SIDE} pixels a side it needs {hint}"
        )


# --- the step users write: `oxi resize`, `oxi run --resize`, `[[op]] resize = ...` --------------------------


@dataclass(frozen=True)
class ResizeStep(Deferred):
    """A resize whose pixel size may depend on the image it meets (one side given, a scale, or a box to fit).

    `fit` places a WxH box's picture; `force` lifts the 8x / 32768-pixel guard; `hint` is how this step's
    author asks for force (the message says it).
    """

    size: SizeSpec
    filter: str = ""  # "": oiiotool's choice for the direction (ops/filters.py: default_filter)
    fit: str = FIT_DEFAULT
    force: bool = False
    hint: str = "--force"

    def __post_init__(self) -> None:
        if self.filter and (problem := check_filter(self.filter)):
            raise UsageError(f"resize: {problem}")
        check_fit(self.fit)
        biggest = max(self.size.width, self.size.height)
        if biggest > MAX_SIDE and not self.force:
            raise UsageError(f"resize to {self.size.describe()}: over {MAX_SIDE} pixels a side needs {self.hint}")

    def resolve(self, width: int, height: int, windows: bool = True, frame: Windows | None = None) -> list[ImageOp]:
        """The ops for a width x height image with these (data, display) windows (None: one window, the
        pixels). The output display window comes from the input's display window alone (a scale, a size, a
        box); the data window follows (displayed_resize). A WxH box with fit, pad or fill is a resize of the
        display window's picture placed in the box, then for pad and fill a Place filling the box's pixels;
        `windows` False (the output format has no data/display windows) makes fit pad too, as oiiotool
        writes a fitted PNG or TIFF: the box, bars black and transparent."""
        frame = frame or ((0, 0, width, height),) * 2
        dw, dh = frame[1][2], frame[1][3]
        box = self.size.scale is None and self.size.width > 0 and self.size.height > 0
        if not box or self.fit == "stretch":
            w, h = (self.size.width, self.size.height) if box else resolved_size(self.size, dw, dh)
            check_growth((dw, dh), (w, h), self.force, self.hint)
            if (w, h) == (dw, dh):
                return []  # as oiiotool: no resize at all (a gaussian or a B-spline would blur at scale 1)
            return [displayed_resize(frame, (w, h), self.filter or default_filter((dw, dh), (w, h)))]
        f = fit_frame(dw, dh, self.size.width, self.size.height, self.fit)
        check_growth((dw, dh), (f.width, f.height), self.force, self.hint)
        name = self.filter or default_filter((dw, dh), (f.width, f.height))
        resize = displayed_resize(frame, (f.width, f.height), name, frame=(
            f.box_width, f.box_height, f.x, f.y), box=(frame[1][0], frame[1][1], f.box_width, f.box_height))
        if f.fills_box() or (self.fit == "fit" and windows):
            return [resize]
        return [resize, Place(f.box_width, f.box_height, f.x, f.y)]


def _build(args: StepArgs) -> ResizeStep:
    given = args.one_of(("size", "width", "height", "scale"))
    if given in ("width", "height"):
        side = args.number(given)
        if side is None or side != int(side) or not 1 <= side <= MAX_DIM:
            raise UsageError(f"{args.label(given)} must be 1..{MAX_DIM} pixels, got {args.text(given)}")
        size = SizeSpec(int(side), 0) if given == "width" else SizeSpec(0, int(side))
    else:
        size = parse_size(args.raw(given), args.label(given), bare_is_scale=given == "scale")
    fit = check_fit(str(args.raw("fit")), args.label("fit"))
    return ResizeStep(size, args.text("filter") or "", fit, args.switch("force") or args.force, args.force_hint)


STEP = Step(
    "resize",
    summary="Resize every channel with a separable filter (sizes as oiiotool: 1920x1080, 1920x0, 50%).",
    value=Param("size", "1920x1080 (a box, see --fit), 1920x0 / 0x1080 (aspect kept) or 50%."),
    params=(
        Param("width", "Output width; height keeps the aspect."),
        Param("height", "Output height; width keeps the aspect."),
        Param("scale", "Scale for both sides: 50% or 0.5."),
        Param("fit", "For a WxH box: fit (aspect kept, windows as oiiotool --fit), pad (bars of 0), "
              "fill (cover, crop the overflow) or stretch (exactly WxH).", default=FIT_DEFAULT,
              complete=choices(*FIT_MODES)),
        Param("filter", f"oiiotool's names: {', '.join(FILTER_NAMES)}. Default: {DEFAULT_HELP}.",
              complete=choices(*FILTER_NAMES)),
        Param("force", "Allow more than 8x or 32768 pixels a side.", kind=FLAG),
    ),
    build=_build,
    run_help="1920x1080 (a box, aspect kept), 1920x0 / 0x1080\n"
             "(the 0 side keeps the aspect) or 50%; a bare\n"
             "number is refused. :fit=fit|pad|fill|stretch\n"
             "for a box, as oiiotool --fit (`oxi resize --help`)",
    examples="""\b
Examples:
  oxi resize plate.exr proxy.exr --size 1920x1080            # fits inside 1920x1080, aspect kept
  oxi resize plate.exr proxy.exr --size 1920x1080 --fit stretch   # exactly 1920x1080 (aspect changes)
  oxi resize plate.exr review.png --size 1920x1080 --fit pad       # 1920x1080, black bars (fill: no bars)
  oxi resize plate.exr half.exr --scale 50% --filter catmull-rom  # or --scale 0.5
  oxi resize logo.png big.png --scale 400%                   # enlarging: blackman-harris, as oiiotool
  oxi resize logo.png big.png --scale 400% --filter lanczos3  # sharper, with ringing
  oxi resize plate.exr thumb.png --width 512                 # height keeps the aspect ratio
  oxi resize plate.exr hd.exr --size 0x1080                  # 0 keeps the aspect, as oiiotool
  oxi resize 'plate.%04d.exr' -o proxies/ --frames 1001-1100x2 --size 1920x1080 --jobs 4
\b
Sizes as oiiotool's --resize: WxH, Wx0 / 0xH (the 0 side keeps the aspect) or N% (a scale); --scale also
takes a factor (0.5). A bare number elsewhere is refused: is 50 a scale or a width? Write 50% or 50x0.
--fit for a WxH box, as oiiotool --fit: fit (default): the largest picture with the source's aspect inside the
box, centred (odd margins: the extra pixel below/right); an EXR gets the box as its display window and the
picture as its data window, no pixel invented; PNG, TIFF and JPEG keep no windows, so they get the box with
bars of 0, as oiiotool writes them. pad: the box's pixels, bars 0 in every channel (transparent black;
oiiotool --fit:pad=1). fill: the smallest picture that covers the box, the overflow cut evenly (oiiotool
--fit:fillmode=width|height, whichever overflows, with pad=1). stretch: exactly WxH, the aspect changes
(oxi's --size before --fit). A result over 8x the source or 32768 pixels a side needs --force.
As oiiotool, a resize transforms the display window: the output display window comes from the input's (same
origin, halves rounded up), the data window is mapped through the same scale (origin down, size up), pixels are
sampled on the display window's grid, black outside the data window (the edge repeats where it meets the display
window's). Shrinking stretches the filter by the ratio; weights are normalised. Negative lobes can make negatives
near HDR edges (not clamped).
--filter takes oiiotool's names and definitions (OpenImageIO filter.cpp); without it, oiiotool's choice:
blackman-harris when a side grows, lanczos3 otherwise. oiiotool's disk and radial-lanczos3 are not separable
and not offered (oxi resizes rows, then columns).
""",
)
