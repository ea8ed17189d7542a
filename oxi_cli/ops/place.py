"""Place the image at an offset inside a box of zeros: pads (bars, offsets >= 0) and crops (overflow, < 0)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import ClassVar

from oxi_cli.errors import OpError
from oxi_cli.ops.base import AxisStep, Box, ImageOp

MAX_DIM = 1 << 20


@dataclass(frozen=True)
class Place(ImageOp):
    """A width x height image whose pixel (r, c) is the input's (r - y, c - x), or 0 in every channel where
    that lies outside the input (transparent black, as oiiotool's --fit:pad=1 and --croptofull)."""

    width: int
    height: int
    x: int = 0
    y: int = 0
    name: ClassVar[str] = "place"

    def __post_init__(self) -> None:
        for label, v in (("width", self.width), ("height", self.height)):
            if int(v) != v or not 1 <= v <= MAX_DIM:
                raise OpError(f"place {label} must be an integer in 1..{MAX_DIM}, got {v}")
        for label, v in (("x", self.x), ("y", self.y)):
            if int(v) != v or abs(v) > MAX_DIM:
                raise OpError(f"place offset {label} must be an integer within ±{MAX_DIM}, got {v}")

    def out_size(self, width: int, height: int) -> tuple[int, int]:
        return self.width, self.height

    def axis_step(self, axis: int, size: int) -> AxisStep:
        if axis == 0:
            return _axis_step(self.y, size, self.height)
        return _axis_step(self.x, size, self.width)

    def piece(self, rows: tuple[int, ...], cols: tuple[int, ...]) -> Place:
        """Outputs [rows[3], rows[4]) from an input piece starting at row rows[2]: the same placement, its
        offset seen from the piece's corners."""
        return replace(
            self,
            width=cols[4] - cols[3],
            height=rows[4] - rows[3],
            x=self.x + cols[2] - cols[3],
            y=self.y + rows[2] - rows[3],
        )

    def work(self, width: int, height: int, channels: int) -> float:
        return float(self.width) * self.height * channels  # one copy or one zero per value

    def sample(self) -> Place:
        return Place(2, 2, 1, -1)  # both branches of the kernels: copied pixels and zeros

    def windows(self, data: Box, display: Box) -> tuple[Box, Box]:
        """The box becomes the data window, where the input's pixels sat less the offset; the display window
        stays (the picture's frame does not move)."""
        return (data[0] - self.x, data[1] - self.y, self.width, self.height), display


@lru_cache(maxsize=32)
def _axis_step(offset: int, src: int, dst: int) -> AxisStep:
    """Output o copies input o - offset. Outputs in a bar read nothing, but every range must read something:
    they name the nearest input edge, one row or column the kernels never use."""
    import numpy as np  # here, not at the top: `oxi --help` imports this module (through resize's step)

    index = np.clip(np.arange(dst, dtype=np.int64) - offset, 0, src - 1)
    return AxisStep(src, dst, first=index, last=index)
