"""The one protocol every compute backend implements, and the device limits the planner reads."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from oxi_cli.ops import Blur, Cdl, ColorOp, ImageOp, Lut1d, Lut3d, Matrix, Resize


@dataclass(frozen=True)
class DeviceLimits:
    """What one device can hold and bind; `detected` is False when these are defaults, not measurements."""

    max_buffer_bytes: int
    max_binding_bytes: int
    max_dim: int
    total_memory: int
    usable_memory: int
    detected: bool


def host_limits() -> DeviceLimits:
    """The machine's RAM seen as a device: what the CPU backend offers, known without importing Numba."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = page * os.sysconf("SC_PHYS_PAGES")
    return DeviceLimits(
        max_buffer_bytes=total,
        max_binding_bytes=total,
        max_dim=1 << 20,
        total_memory=total,
        usable_memory=int(page * os.sysconf("SC_AVPHYS_PAGES") * 0.6),
        detected=True,
    )


class HostOnly:
    """Stands in for a backend when a chain has nothing to compute (a copy or re-encode): plans it without
    waiting for a GPU that will never be used."""

    name = "cpu"

    def limits(self) -> DeviceLimits:
        return host_limits()


@runtime_checkable
class Backend(Protocol):
    """Images live on the backend as handles of shape (height, width, channels), float32 values.

    Colour methods touch channels 0..2 (R, G, B); `matrix` also reads/writes channel 3 as alpha when
    `has_alpha`. `src` and `dst` may be the same handle for colour ops, never for resize or blur.
    """

    name: str

    def limits(self) -> DeviceLimits: ...

    def prepare(self, ops: Sequence[ColorOp | ImageOp], channels: int, has_alpha: bool) -> None:
        """Load or compile every kernel the chain needs; may run on a worker thread while the input decodes."""
        ...

    def upload(self, pixels: np.ndarray) -> Any:
        """(H, W, C) float32 or float16 array -> handle."""
        ...

    def allocate(self, height: int, width: int, channels: int) -> Any: ...

    def download(self, handle: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Handle -> (H, W, C) float32 array (written into `out` when given)."""
        ...

    def color_chain(self, src: Any, dst: Any, ops: Sequence[ColorOp], has_alpha: bool) -> None:
        """Consecutive colour ops fused: each pixel read and written once (see oxi_cli/ops/program.py)."""
        ...

    def cdl(self, src: Any, dst: Any, op: Cdl) -> None: ...

    def matrix(self, src: Any, dst: Any, op: Matrix, has_alpha: bool) -> None: ...

    def lut1d(self, src: Any, dst: Any, op: Lut1d) -> None: ...

    def lut3d(self, src: Any, dst: Any, op: Lut3d) -> None: ...

    def resize(self, src: Any, dst: Any, op: Resize) -> None: ...

    def blur(self, src: Any, dst: Any, op: Blur) -> None: ...

