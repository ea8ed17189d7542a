"""Separable Gaussian blur: taps -R..R with R = ceil(3σ), normalised weights, clamped edges."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from oxi_cli.errors import OpError
from oxi_cli.ops.base import AxisStep, ImageOp
from oxi_cli.ops.step import Param, Step, StepArgs

if TYPE_CHECKING:
    import numpy as np  # annotations only: numpy loads when a function here runs, not for `oxi --help`

MAX_SIGMA = 2000.0


@dataclass(frozen=True)
class Blur(ImageOp):
    """Gaussian of standard deviation `sigma` pixels on every channel."""

    sigma: float
    name: ClassVar[str] = "blur"

    def __post_init__(self) -> None:
        s = float(self.sigma)
        if not (math.isfinite(s) and 0 < s <= MAX_SIGMA):
            raise OpError(f"blur sigma must be in (0, {MAX_SIGMA}], got {self.sigma}")
        object.__setattr__(self, "sigma", s)

    @classmethod
    def from_radius(cls, radius: float) -> Blur:
        """`--radius R` means sigma = R / 3, so the kernel reaches R pixels."""
        if not (math.isfinite(radius) and radius > 0):
            raise OpError(f"--radius must be a positive number, got {radius}")
        return cls(radius / 3.0)

    @property
    def radius(self) -> int:
        return math.ceil(3.0 * self.sigma)

    def weights(self) -> np.ndarray:
        """Normalised float64 taps for k = -R..R."""
        import numpy as np

        k = np.arange(-self.radius, self.radius + 1, dtype=np.float64)
        w = np.exp(-(k * k) / (2.0 * self.sigma * self.sigma))
        return w / w.sum()

    def axis_step(self, axis: int, size: int) -> AxisStep:
        return AxisStep(size, size, radius=self.radius)

    def work(self, width: int, height: int, channels: int) -> float:
        return float(width) * height * channels * 2 * (2 * self.radius + 1)  # two passes of 2R + 1 taps


def _build(args: StepArgs) -> list[Blur]:
    if args.one_of(("sigma", "radius")) == "sigma":
        return [Blur(args.number("sigma"))]  # type: ignore[arg-type]
    return [Blur.from_radius(args.number("radius"))]  # type: ignore[arg-type]


STEP = Step(
    "blur",
    summary="Gaussian blur on every channel.",
    value=Param("sigma", "Standard deviation in pixels.", metavar="SIGMA"),
    params=(Param("radius", "Kernel reach in pixels; sigma = radius / 3."),),
    build=_build,
    run_help="gaussian sigma in pixels; or radius=R",
    examples="""\b
Examples:
  oxi blur plate.exr soft.exr --sigma 2.25
  oxi blur plate.exr soft.exr --radius 9        # sigma = 3
  oxi blur shots/ -o soft/ --sigma 2 --continue-on-error --json > blur.jsonl
\b
Gaussian of standard deviation sigma pixels, taps -R..R with R = ceil(3 sigma), normalised, edges clamp.
(oiiotool --blur W is sigma = W/4; libvips gaussblur cuts its mask near 1.8 sigma: the tools differ.)
""",
)
