"""ASC CDL (slope, offset, power, saturation) as OpenColorIO's CDLTransform, both clamp styles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded, check_finite, finite_triple
from oxi_cli.ops.codes import CDL_ASC, CDL_NOCLAMP

CdlStyle = Literal["noclamp", "asc"]
# Rec.709 luma weights, as OCIO's CDL saturation uses.
LUMA = (0.2126, 0.7152, 0.0722)


@dataclass(frozen=True)
class Cdl(ColorOp):
    """out = sat-mix of ((in*slope + offset) ** power); `asc` clamps to [0, 1] before power and after sat."""

    slope: tuple[float, float, float] = (1.0, 1.0, 1.0)
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    power: tuple[float, float, float] = (1.0, 1.0, 1.0)
    sat: float = 1.0
    style: CdlStyle = "noclamp"
    name: ClassVar[str] = "cdl"

    def __post_init__(self) -> None:
        for label in ("slope", "offset", "power"):
            object.__setattr__(self, label, finite_triple(label, getattr(self, label)))
        object.__setattr__(self, "sat", float(self.sat))
        check_finite("sat", [self.sat])
        # Same bounds OpenColorIO's CDLOpData::validate enforces.
        if min(self.slope) < 0:
            raise OpError(f"CDL slope must be >= 0, got {self.slope}")
        if min(self.power) <= 0:
            raise OpError(f"CDL power must be > 0, got {self.power}")
        if self.sat < 0:
            raise OpError(f"CDL saturation must be >= 0, got {self.sat}")
        if self.style not in ("noclamp", "asc"):
            raise OpError(f"CDL style must be 'noclamp' or 'asc', got {self.style!r}")

    def is_identity(self) -> bool:
        neutral = (
            self.slope == (1.0, 1.0, 1.0)
            and self.offset == (0.0, 0.0, 0.0)
            and self.power == (1.0, 1.0, 1.0)
            and self.sat == 1.0
        )
        return neutral and self.style == "noclamp"

    def encode(self, has_alpha: bool) -> Encoded:
        code = CDL_ASC if self.style == "asc" else CDL_NOCLAMP
        return Encoded(code, [*self.slope, *self.offset, *self.power, self.sat])
