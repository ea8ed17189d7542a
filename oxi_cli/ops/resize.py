"""Separable resize with pixel-centre mapping, filter stretched when shrinking, clamped edges (as oiiotool)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import ClassVar, Literal

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import AxisStep, ImageOp

FilterName = Literal["lanczos3", "catmull-rom", "mitchell", "triangle", "box"]
# Filter half-widths in source pixels at scale 1.
FILTER_RADIUS: dict[str, float] = {
    "box": 0.5,
    "triangle": 1.0,
    "catmull-rom": 2.0,
    "mitchell": 2.0,
    "lanczos3": 3.0,
}
MAX_DIM = 1 << 20


@dataclass(frozen=True)
class Resize(ImageOp):
    """Resample every channel to width x height with the named filter."""

    width: int
    height: int
    filter: FilterName = "lanczos3"
    # For one band or tile of a larger resize (set by the planner): per axis (full source size, full output
    # size, first source index the piece holds, first output index it makes), so the piece uses the whole
    # image's weights and equals a single pass bit for bit. None: this op is the whole resize.
    rows: tuple[int, int, int, int] | None = None
    cols: tuple[int, int, int, int] | None = None
    name: ClassVar[str] = "resize"

    def __post_init__(self) -> None:
        if self.filter not in FILTER_RADIUS:
            raise OpError(f"unknown filter {self.filter!r}; choose one of {', '.join(FILTER_RADIUS)}")
        for label, v in (("width", self.width), ("height", self.height)):
            if int(v) != v or not 1 <= v <= MAX_DIM:
                raise OpError(f"resize {label} must be an integer in 1..{MAX_DIM}, got {v}")

    def out_size(self, width: int, height: int) -> tuple[int, int]:
        return self.width, self.height

    def axis_step(self, axis: int, size: int) -> AxisStep:
        return _axis_step(self.filter, size, self.height if axis == 0 else self.width)

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
        return replace(self, width=2, height=2)

    def weights(self, axis: int, src: int, dst: int) -> AxisWeights:
        """Taps and weights for axis 0 (rows) or 1 (columns) of a `src` -> `dst` pixel piece; every backend
        resizes with these."""
        window = self.rows if axis == 0 else self.cols
        if window is None:
            return image_weights(self.filter, src, dst)
        return window_weights(self.filter, window[:2], window[2:], (src, dst))

    def support(self, src: int, dst: int) -> float:
        """Filter half-width in source pixels for one axis (stretched when shrinking)."""
        return FILTER_RADIUS[self.filter] * max(1.0, src / dst)

    @staticmethod
    def resolve_size(
        src_w: int,
        src_h: int,
        width: int | None = None,
        height: int | None = None,
        scale: float | None = None,
    ) -> tuple[int, int]:
        """Turn --width / --height / --size / --scale into a size, keeping the aspect when one side is given."""
        if scale is not None:
            if not (math.isfinite(scale) and scale > 0):
                raise OpError(f"--scale must be a positive number, got {scale}")
            return max(1, round(src_w * scale)), max(1, round(src_h * scale))
        if width is not None and height is not None:
            return width, height
        if width is not None:
            return width, max(1, round(src_h * width / src_w))
        if height is not None:
            return max(1, round(src_w * height / src_h)), height
        raise OpError("resize needs one of --width, --height, --size or --scale")


def filter_weight(name: str, d: np.ndarray) -> np.ndarray:
    """The named filter evaluated at distances `d` (float64, in filter units)."""
    a = np.abs(d)
    if name == "box":
        return (a <= 0.5).astype(np.float64)
    if name == "triangle":
        return np.maximum(0.0, 1.0 - a)
    if name == "lanczos3":
        return np.where(a < 3.0, np.sinc(d) * np.sinc(d / 3.0), 0.0)
    b, c = (0.0, 0.5) if name == "catmull-rom" else (1.0 / 3.0, 1.0 / 3.0)
    near = ((12 - 9 * b - 6 * c) * a**3 + (-18 + 12 * b + 6 * c) * a**2 + (6 - 2 * b)) / 6.0
    far = ((-b - 6 * c) * a**3 + (6 * b + 30 * c) * a**2 + (-12 * b - 48 * c) * a + (8 * b + 24 * c)) / 6.0
    return np.where(a < 1.0, near, np.where(a < 2.0, far, 0.0))


@dataclass(frozen=True)
class AxisWeights:
    """Per output pixel: `count` taps at clamped source indices `index[:, :count]` with `weight`s summing to 1."""

    index: np.ndarray  # (dst, taps) int32, clamped to [0, src-1]
    weight: np.ndarray  # (dst, taps) float32, zero past count
    count: np.ndarray  # (dst,) int32


def axis_weights(filter_name: str, src: int, dst: int) -> AxisWeights:
    """Tap indices and normalised weights mapping `src` pixels onto `dst` along one axis."""
    scale = src / dst
    stretch = max(1.0, scale)
    support = FILTER_RADIUS[filter_name] * stretch
    center = (np.arange(dst, dtype=np.float64) + 0.5) * scale - 0.5
    first = np.ceil(center - support).astype(np.int64)
    last = np.floor(center + support).astype(np.int64)
    taps = int((last - first).max()) + 1
    pos = first[:, None] + np.arange(taps)[None, :]
    inside = pos <= last[:, None]
    w = np.where(inside, filter_weight(filter_name, (pos - center[:, None]) / stretch), 0.0)
    total = w.sum(axis=1, keepdims=True)
    # A filter can miss every tap only for degenerate box cases; fall back to the nearest pixel.
    empty = total[:, 0] == 0.0
    if empty.any():
        w[empty] = 0.0
        w[empty, 0] = 1.0
        pos[empty, 0] = np.clip(np.rint(center[empty]), 0, src - 1).astype(np.int64)
        inside[empty] = False
        inside[empty, 0] = True
        total[empty] = 1.0
    w /= total
    count = inside.sum(axis=1).astype(np.int32)
    return AxisWeights(
        index=np.clip(pos, 0, src - 1).astype(np.int32),
        weight=w.astype(np.float32),
        count=count,
    )


@lru_cache(maxsize=32)
def image_weights(filter_name: str, src: int, dst: int) -> AxisWeights:
    """axis_weights for a whole axis, computed once per process (every band slices the same arrays)."""
    return axis_weights(filter_name, src, dst)


def window_weights(
    filter_name: str, full: tuple[int, int], start: tuple[int, int], size: tuple[int, int]
) -> AxisWeights:
    """Weights of outputs [start[1], start[1] + size[1]) of a full[0] -> full[1] resize, with tap indices
    relative to an input band starting at row start[0] and size[0] rows long (clamped into it: only
    outputs a band crops away can reach past its ends)."""
    ax = image_weights(filter_name, *full)
    rows = slice(start[1], start[1] + size[1])
    return AxisWeights(
        index=np.ascontiguousarray(np.clip(ax.index[rows] - start[0], 0, size[0] - 1), dtype=np.int32),
        weight=np.ascontiguousarray(ax.weight[rows]),
        count=np.ascontiguousarray(ax.count[rows]),
    )


@lru_cache(maxsize=32)
def _axis_step(filter_name: str, src: int, dst: int) -> AxisStep:
    """The input range each output range reads: suffix minimum of the first tap, prefix maximum of the last."""
    ax = image_weights(filter_name, src, dst)
    first = ax.index[:, 0].astype(np.int64)
    last = ax.index[np.arange(dst), ax.count - 1].astype(np.int64)
    return AxisStep(src, dst, first=np.minimum.accumulate(first[::-1])[::-1], last=np.maximum.accumulate(last))
