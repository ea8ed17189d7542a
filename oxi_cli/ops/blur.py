"""Separable Gaussian blur: taps -R..R with R = ceil(3σ), normalised weights, clamped edges."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import AxisStep, ImageOp

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
        k = np.arange(-self.radius, self.radius + 1, dtype=np.float64)
        w = np.exp(-(k * k) / (2.0 * self.sigma * self.sigma))
        return w / w.sum()

    def axis_step(self, axis: int, size: int) -> AxisStep:
        return AxisStep(size, size, radius=self.radius)
