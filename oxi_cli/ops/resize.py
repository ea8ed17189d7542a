"""Separable resize with pixel-centre mapping, filter stretched when shrinking, clamped edges (as oiiotool)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ImageOp

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
    name: ClassVar[str] = "resize"

    def __post_init__(self) -> None:
        if self.filter not in FILTER_RADIUS:
            raise OpError(f"unknown filter {self.filter!r}; choose one of {', '.join(FILTER_RADIUS)}")
        for label, v in (("width", self.width), ("height", self.height)):
            if int(v) != v or not 1 <= v <= MAX_DIM:
                raise OpError(f"resize {label} must be an integer in 1..{MAX_DIM}, got {v}")

    def out_size(self, width: int, height: int) -> tuple[int, int]:
        return self.width, self.height

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
