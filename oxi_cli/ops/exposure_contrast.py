"""Exposure and contrast as OpenColorIO's ExposureContrastTransform: linear, video and log styles, both ways."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded, check_finite
from oxi_cli.ops.codes import EXPOSURE_CONTRAST

Style = Literal["linear", "video", "log"]
F32 = np.float32
MIN_PIVOT, MIN_CONTRAST = 0.001, 0.001
VIDEO_OETF_POWER = 0.54644808743169393  # 1 / 1.83, as OCIO


@dataclass(frozen=True)
class ExposureContrast(ColorOp):
    """Linear and video: out = pivot * max(0, in * 2^exposure / pivot) ** contrast (exposure and pivot through
    the video OETF power for `video`); a contrast of 1 is a plain scale, negatives kept. Log: out = in *
    contrast + offset around the log pivot. Contrast is contrast * gamma, as OCIO. `inverse` undoes it."""

    exposure: float = 0.0
    contrast: float = 1.0
    gamma: float = 1.0
    pivot: float = 0.18
    style: Style = "linear"
    log_exposure_step: float = 0.088
    log_mid_gray: float = 0.435
    inverse: bool = False
    name: ClassVar[str] = "exposure_contrast"

    def __post_init__(self) -> None:
        values = [self.exposure, self.contrast, self.gamma, self.pivot, self.log_exposure_step, self.log_mid_gray]
        check_finite("exposure/contrast", values)
        if self.style not in ("linear", "video", "log"):
            raise OpError(f"exposure/contrast style must be linear, video or log, got {self.style!r}")

    def encode(self, has_alpha: bool) -> Encoded:
        """Params: mode (0 scale+offset, 1 power), then a, b, c: mode 0 out = in * a + b; mode 1
        out = max(0, in * a) ** b * c."""
        if self.style == "log":
            return Encoded(EXPOSURE_CONTRAST, [0.0, *self._log()])
        power = VIDEO_OETF_POWER if self.style == "video" else 1.0
        contrast = F32(max(MIN_CONTRAST, self.contrast * self.gamma))
        pivot = F32(max(MIN_PIVOT, self.pivot))
        exposure = F32(2.0) ** F32(self.exposure)
        if self.style == "video":
            pivot, exposure = F32(pivot ** F32(power)), F32(exposure ** F32(power))
        if contrast == F32(1.0):
            scale = F32(1.0) / exposure if self.inverse else exposure
            return Encoded(EXPOSURE_CONTRAST, [0.0, float(scale), 0.0, 0.0])
        if not self.inverse:
            return Encoded(EXPOSURE_CONTRAST, [1.0, float(exposure / pivot), float(contrast), float(pivot)])
        inv_exposure = F32(1.0) / exposure
        return Encoded(EXPOSURE_CONTRAST,
                       [1.0, float(F32(1.0) / pivot), float(F32(1.0) / contrast), float(pivot * inv_exposure)])

    def _log(self) -> list[float]:
        pivot = max(MIN_PIVOT, self.pivot)
        log_pivot = F32(max(0.0, math.log2(pivot / 0.18) * self.log_exposure_step + self.log_mid_gray))
        # OCIO's log renderers use the default 0.088 step for the exposure in the inverse direction (the
        # inverse renderer never reads the op's step); oxi matches what OCIO computes.
        step = F32(self.log_exposure_step) if not self.inverse else F32(0.088)
        exposure = F32(self.exposure) * step
        if not self.inverse:
            contrast = F32(max(MIN_CONTRAST, self.contrast * self.gamma))
            return [float(contrast), float((exposure - log_pivot) * contrast + log_pivot), 0.0]
        inv_contrast = F32(max(MIN_CONTRAST, 1.0 / (self.contrast * self.gamma)))
        return [float(inv_contrast), float(log_pivot - log_pivot * inv_contrast - exposure), 0.0]
