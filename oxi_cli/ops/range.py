"""Range as OpenColorIO's RangeTransform (clamping style): scale and offset, then clamp to the output bounds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded, check_finite
from oxi_cli.ops.codes import RANGE


@dataclass(frozen=True)
class Range(ColorOp):
    """Maps [min_in, max_in] onto [min_out, max_out] and clamps there; a bound left None is open (then
    that side neither scales nor clamps, as CLF v3). NaN becomes the lower bound (the upper one when only
    that is set), as OCIO's Range renderers do. `clamp=False` (OCIO's RANGE_NO_CLAMP) only scales."""

    min_in: float | None = None
    max_in: float | None = None
    min_out: float | None = None
    max_out: float | None = None
    clamp: bool = True
    name: ClassVar[str] = "range"

    def __post_init__(self) -> None:
        lo, hi = (self.min_in, self.min_out), (self.max_in, self.max_out)
        for label, pair in (("minimum", lo), ("maximum", hi)):
            if (pair[0] is None) != (pair[1] is None):
                raise OpError(f"range {label} needs both its input and output value, or neither")
        if self.min_in is None and self.max_in is None:
            raise OpError("range needs a minimum, a maximum or both")
        check_finite("range bounds", [v for v in (*lo, *hi) if v is not None])
        if self.min_in is not None and self.max_in is not None and abs(self.max_in - self.min_in) < 1e-6:
            raise OpError("range maximum input is too close to its minimum")

    def scale_offset(self) -> tuple[float, float]:
        """out = in * scale + offset before clamping, in double precision (OCIO's fillScaleOffset)."""
        if self.min_in is None or self.max_in is None:
            return 1.0, 0.0
        scale = (self.max_out - self.min_out) / (self.max_in - self.min_in)  # type: ignore[operator]
        return scale, self.min_out - scale * self.min_in  # type: ignore[operator]

    def encode(self, has_alpha: bool) -> Encoded:
        scale, offset = self.scale_offset()
        has_lo, has_hi = self.clamp and self.min_out is not None, self.clamp and self.max_out is not None
        return Encoded(RANGE, [scale, offset, self.min_out or 0.0, self.max_out or 0.0, float(has_lo), float(has_hi)])
