"""Shared validation helpers and the two op families: ColorOp (per pixel) and ImageOp (spatial)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from oxi_cli.errors import OpError

FLOAT32_MAX = float(np.finfo(np.float32).max)

if TYPE_CHECKING:
    from oxi_cli.backends.base import Backend


class ColorOp:
    """A per-pixel transform of R, G, B (alpha only for 4x4 matrices); other channels pass through."""

    name: ClassVar[str]

    def is_identity(self) -> bool:
        return False

    def dispatch(self, backend: Backend, src: Any, dst: Any, has_alpha: bool) -> None:
        """Run this op on `backend`, reading `src` and writing `dst` (may be the same handle)."""
        getattr(backend, self.name)(src, dst, self)


class ImageOp:
    """A spatial transform acting on every channel; may change the image size."""

    name: ClassVar[str]

    def is_identity(self) -> bool:
        return False

    def out_size(self, width: int, height: int) -> tuple[int, int]:
        return width, height

    def dispatch(self, backend: Backend, src: Any, dst: Any) -> None:
        getattr(backend, self.name)(src, dst, self)


def finite_triple(label: str, values: float | Iterable[float]) -> tuple[float, float, float]:
    """Accept one number or three; reject NaN/Inf so kernels never see them as parameters."""
    if isinstance(values, (int, float)):
        values = (values,) * 3
    vals = tuple(float(v) for v in values)
    if len(vals) != 3:
        raise OpError(f"{label} needs 1 or 3 numbers, got {len(vals)}")
    check_finite(label, vals)
    return vals  # type: ignore[return-value]


def check_finite(label: str, values: Sequence[float]) -> None:
    """Finite and within float32's range: kernels take parameters as float32, where 1e39 is Inf."""
    if not all(math.isfinite(v) for v in values):
        raise OpError(f"{label} must be finite numbers, got {list(values)}")
    if any(abs(v) > FLOAT32_MAX for v in values):
        raise OpError(f"{label} must lie within ±3.4e38 (float32), got {list(values)}")


def freeze_lut(op: object, label: str, table: np.ndarray, size: int, min_size: int, max_size: int) -> None:
    """Shared LUT checks (size, finite values, a non-empty domain), then store a read-only contiguous table."""
    if not min_size <= size <= max_size:
        raise OpError(f"{label} size must be {min_size}..{max_size}, got {size}")
    if not np.isfinite(table).all():
        raise OpError(f"{label} contains NaN or Inf values")
    lo = finite_triple(f"{label} domain min", op.domain_min)  # type: ignore[attr-defined]
    hi = finite_triple(f"{label} domain max", op.domain_max)  # type: ignore[attr-defined]
    if any(h <= lo_ for lo_, h in zip(lo, hi, strict=True)):
        raise OpError(f"{label} domain max {hi} must exceed domain min {lo}")
    table = np.ascontiguousarray(table)
    table.setflags(write=False)
    object.__setattr__(op, "table", table)
    object.__setattr__(op, "domain_min", lo)
    object.__setattr__(op, "domain_max", hi)
