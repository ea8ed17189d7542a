"""Power curves as OpenColorIO's ExponentTransform and ExponentWithLinearTransform, every negative style."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded, finite_triple
from oxi_cli.ops.codes import EXPONENT, MONCURVE_FWD, MONCURVE_REV

NegativeStyle = Literal["clamp", "mirror", "pass"]
# The style as the kernels read it (params[o]).
STYLES = {"clamp": 0.0, "mirror": 1.0, "pass": 2.0}
# OCIO nudges a moncurve's gamma above 1 and its offset above 0 (no division by zero at the break point).
EPS = 1e-6


@dataclass(frozen=True)
class Exponent(ColorOp):
    """out = x ** gamma per channel; negatives: `clamp` to 0 first (NaN too), `mirror` (sign * |x| ** g) or
    `pass` (unchanged). An inverse exponent is the forward one with 1 / gamma, as OCIO computes it."""

    gamma: tuple[float, float, float]
    style: NegativeStyle = "clamp"
    name: ClassVar[str] = "exponent"

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", finite_triple("exponent", self.gamma))
        if self.style not in STYLES:
            raise OpError(f"exponent negative style must be clamp, mirror or pass, got {self.style!r}")

    def is_identity(self) -> bool:
        return self.gamma == (1.0, 1.0, 1.0) and self.style != "clamp"

    def encode(self, has_alpha: bool) -> Encoded:
        return Encoded(EXPONENT, [STYLES[self.style], *self.gamma])


@dataclass(frozen=True)
class ExponentLinear(ColorOp):
    """OCIO's ExponentWithLinearTransform (the 'moncurve' of sRGB and Rec.709): a power segment on
    (x + offset) / (1 + offset) above the break point, a line below it. `mirror` applies it to |x| and
    restores the sign; otherwise negatives follow the line. `inverse` decodes instead of encoding."""

    gamma: tuple[float, float, float]
    offset: tuple[float, float, float]
    mirror: bool = False
    inverse: bool = False
    name: ClassVar[str] = "exponent_linear"

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", finite_triple("exponent", self.gamma))
        object.__setattr__(self, "offset", finite_triple("exponent offset", self.offset))
        if min(self.gamma) < 1.0 or min(self.offset) < 0.0:
            raise OpError(f"exponent with linear needs gamma >= 1 and offset >= 0, got {self.gamma}, {self.offset}")

    def encode(self, has_alpha: bool) -> Encoded:
        rows = [_moncurve_params(g, o, self.inverse) for g, o in zip(self.gamma, self.offset, strict=True)]
        # Per channel: power, offset, break point, slope of the line, scale (OCIO's renderer parameters).
        params = np.asarray(rows, np.float32).T.ravel().tolist()
        return Encoded(MONCURVE_REV if self.inverse else MONCURVE_FWD, [float(self.mirror), *params])


def _moncurve_params(gamma: float, offset: float, inverse: bool) -> tuple[float, ...]:
    """The five renderer parameters, in double precision as OCIO derives them (the kernels get float32)."""
    g = max(gamma, 1.0 + EPS)
    o = max(offset, EPS)
    if not inverse:
        slope = (g - 1.0) / o * (o * g / ((g - 1.0) * (1.0 + o))) ** g
        return g, o / (1.0 + o), o / (g - 1.0), slope, 1.0 / (1.0 + o)
    brk = (o * g / ((g - 1.0) * (1.0 + o))) ** g
    slope = ((g - 1.0) / o) ** (g - 1.0) * ((1.0 + o) / g) ** g
    return 1.0 / g, o, brk, slope, 1.0 + o
