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
    """Images live on the backend as handles of shape (height, width, channels), float32 values (a half input
    may stay half where the backend can compute on it directly: the CPU's colour ops do).

    Colour methods touch channels 0..2 (R, G, B); `matrix` also reads/writes channel 3 as alpha when
    `has_alpha`. `src` and `dst` may be the same handle for colour ops, never for resize or blur.
    """

    name: str

    def limits(self) -> DeviceLimits: ...

    def prepare(
        self, ops: Sequence[ColorOp | ImageOp], channels: int, has_alpha: bool, half_input: bool = False
    ) -> None:
        """Load or compile every kernel the chain needs (for half or float32 input); may run on a worker thread
        while the input decodes."""
        ...

    def upload(self, pixels: np.ndarray | Sequence[np.ndarray], adopt: bool = False, half: bool = False) -> Any:
        """An (H, W, C) array or C (H, W) planes, float32 or float16 -> handle. `pixels` are left as they
        are unless `adopt`: then the caller gives them away and a host-memory backend may compute in them.
        `half`: float16 pixels may stay half on the device, because whatever is written into this handle is
        stored as half anyway (otherwise it holds float32, so no intermediate result is rounded)."""
        ...

    def allocate(self, height: int, width: int, channels: int, half: bool = False) -> Any:
        """A handle for an op's result; `half`: it only goes on to be stored as half, so a backend that can
        keep half pixels may (the CPU does: half the bytes to write and convert)."""
        ...

    def download(self, handle: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Handle -> (H, W, C) float32 array (written into `out`, float32 or float16, when given)."""
        ...

    def download_planes(self, handle: Any, dtype: type = np.float32) -> list[np.ndarray]:
        """Handle -> one C-contiguous (H, W) array per channel, float32 or float16 (what writers take)."""
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

