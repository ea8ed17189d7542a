"""Log encodings as OpenColorIO's LogTransform, LogAffineTransform and LogCameraTransform, both directions."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded, check_finite, finite_triple
from oxi_cli.ops.codes import LIN_TO_LOG, LOG_TO_LIN

F32 = np.float32
FLT_MIN = float(np.finfo(np.float32).tiny)


@dataclass(frozen=True)
class Log(ColorOp):
    """Forward (lin -> log): y = log_slope * log_base(lin_slope * x + lin_offset) + log_offset, the log's
    argument floored at FLT_MIN (so negatives and NaN give a finite value, as OCIO). With `lin_break`
    (LogCamera) values below it follow a line instead, of slope `linear_slope` (derived when None).
    `inverse` decodes. A plain LogTransform is slope 1, offset 0."""

    base: float = 10.0
    log_slope: tuple[float, float, float] = (1.0, 1.0, 1.0)
    log_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    lin_slope: tuple[float, float, float] = (1.0, 1.0, 1.0)
    lin_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    lin_break: tuple[float, float, float] | None = None
    linear_slope: tuple[float, float, float] | None = None
    inverse: bool = False
    name: ClassVar[str] = "log"

    def __post_init__(self) -> None:
        for label in ("log_slope", "log_offset", "lin_slope", "lin_offset", "lin_break", "linear_slope"):
            if getattr(self, label) is not None:
                object.__setattr__(self, label, finite_triple(f"log {label}", getattr(self, label)))
        object.__setattr__(self, "base", float(self.base))
        check_finite("log base", [self.base])
        if self.base <= 0.0 or self.base == 1.0:
            raise OpError(f"log base must be positive and not 1, got {self.base}")
        if 0.0 in self.log_slope or 0.0 in self.lin_slope:
            raise OpError("log slopes must not be 0")

    def encode(self, has_alpha: bool) -> Encoded:
        camera = self.lin_break is not None
        rows = [self._channel(c) for c in range(3)]
        params = np.asarray(rows, np.float32).T.ravel().tolist()
        return Encoded(LOG_TO_LIN if self.inverse else LIN_TO_LOG, [float(camera), *params])

    def _channel(self, c: int) -> tuple[float, ...]:
        """Seven float32 constants per channel, computed as OCIO's renderers compute them (LogOpCPU.cpp,
        LogUtils.cpp): which steps run in double and which in float moves the line's offset by ulps, and
        near its zero crossing that is the whole value."""
        m, b = F32(self.lin_slope[c]), F32(self.lin_offset[c])
        ks, kb = self.log_slope[c], F32(self.log_offset[c])
        base = float(F32(self.base))  # OCIO's renderers keep the base as a float
        log2_base = F32(math.log2(base))
        if self.lin_break is None:
            brk = slope = lin_off = F32(0.0)
        else:
            brk_lin, ms, mo = self.lin_break[c], self.lin_slope[c], self.lin_offset[c]
            slope = F32(self.linear_slope[c]) if self.linear_slope is not None else F32(
                ks * ms / ((ms * brk_lin + mo) * math.log(base)))
            # GetLogSideBreak: log2 of a float in double, then a float times a double quotient.
            log_brk = F32(math.log2(float(F32(ms * brk_lin + mo))))
            log_brk = F32(F32(float(log_brk) * (float(F32(ks)) / math.log2(base))) + kb)
            lin_off = F32(log_brk - F32(slope * F32(brk_lin)))
            brk = F32(brk_lin) if not self.inverse else log_brk
        if not self.inverse:
            klog = F32(ks / float(log2_base))
            return float(m), float(b), float(klog), float(kb), float(brk), float(slope), float(lin_off)
        kinv = F32(log2_base / F32(ks))
        # Decoding: (y - log_offset) * kinv -> exp2 -> (v - lin_offset) / lin_slope; the line inverted below.
        return float(-kb), float(kinv), float(-b), float(F32(1.0) / m), float(brk), float(F32(1.0) / slope) if \
            self.lin_break is not None else 0.0, float(-lin_off)

