"""Unpremultiply and re-premultiply by alpha around each run of colour ops (`--unpremult`), as OIIO's colorconvert."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from oxi_cli.ops.base import ColorOp, Encoded, ImageOp, live
from oxi_cli.ops.codes import REPREMULT, UNPREMULT

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class Unpremult(ColorOp):
    """R, G, B divided by alpha; where alpha is under FLT_MIN (0, negative, denormal, NaN) by 1, so such a pixel
    (a glow over nothing) is graded undivided, as OIIO's colorconvert with unpremult does. Alpha is read, never
    changed; on a layer without alpha nothing changes."""

    name: ClassVar[str] = "unpremult"
    flops_per_pixel: ClassVar[int] = 4

    def touches_alpha(self) -> bool:
        return True

    def encode(self, has_alpha: bool) -> Encoded:
        # Whether channel 3 is alpha: without it the CPU hands the kernel another plane there.
        return Encoded(UNPREMULT, [1.0 if has_alpha else 0.0])


@dataclass(frozen=True)
class Repremult(ColorOp):
    """R, G, B multiplied by the alpha the pixel entered the colour program with (a 4x4 matrix between may have
    changed channel 3), by 1 where Unpremult divided by 1: a glow at alpha 0 keeps its graded light, where a
    plain premultiply would make it black (OIIO's colorconvert). Alpha is read, never changed; on a layer
    without alpha nothing changes."""

    name: ClassVar[str] = "repremult"
    flops_per_pixel: ClassVar[int] = 3

    def touches_alpha(self) -> bool:
        return True

    def encode(self, has_alpha: bool) -> Encoded:
        return Encoded(REPREMULT, [1.0 if has_alpha else 0.0])


class UnpremultipliedOnHost(ColorOp):
    """A colour op no kernel runs (OCIO's CPU processor: ops/ocio_cpu.py), applied to unpremultiplied R, G, B
    on the host as Unpremult, the op and Repremult would: the executor runs it between device programs, so it
    cannot sit inside one."""

    def __init__(self, op: ColorOp) -> None:
        self.op = op
        self.name = f"unpremultiplied {op.name}"  # type: ignore[misc]  # reports say which op

    def __repr__(self) -> str:
        return f"UnpremultipliedOnHost({self.op!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnpremultipliedOnHost) and other.op == self.op

    def __hash__(self) -> int:
        return hash((UnpremultipliedOnHost, self.op))

    def touches_alpha(self) -> bool:
        return True

    def runs_natively(self) -> bool:
        return False

    def work(self, width: int, height: int, channels: int) -> float:
        return self.op.work(width, height, channels) + 8.0 * width * height

    def apply_on_host(self, planes: Sequence[np.ndarray]) -> None:
        """R, G, B in place; alpha (a fourth plane, when the layer has it) is read only."""
        import numpy as np

        if len(planes) < 4:
            self.op.apply_on_host(planes[:3])
            return
        rgb, d = list(planes[:3]), divisor(planes[3])
        unpremultiply(rgb, planes[3])
        self.op.apply_on_host(rgb)
        with np.errstate(all="ignore"):  # NaN and Inf go through as IEEE says, as in the kernels
            for plane in rgb:
                np.multiply(plane, d, out=plane)


def divisor(alpha: np.ndarray) -> np.ndarray:
    """What R, G, B are divided and multiplied by: alpha, or 1 where it is under FLT_MIN or NaN (OIIO's
    colorconvert: `a >= FLT_MIN ? a : 1`), float32."""
    import numpy as np

    alpha = alpha.astype(np.float32, copy=False)
    return np.where(alpha >= np.finfo(np.float32).tiny, alpha, np.float32(1.0))


def unpremultiply(rgb: Sequence[np.ndarray], alpha: np.ndarray) -> None:
    """R, G, B planes divided in place by `alpha`'s divisor, as the UNPREMULT kernel (NumPy: the host's and the
    CPU's stand-in while that kernel compiles)."""
    import numpy as np

    d = divisor(alpha)
    with np.errstate(all="ignore"):  # NaN and Inf go through as IEEE says, as in the kernels
        for plane in rgb:
            np.divide(plane, d, out=plane)


def repremultiply(planes: Sequence[np.ndarray], entered: Sequence[np.ndarray]) -> None:
    """R, G, B planes re-premultiplied in place by the divisor of `entered`'s alpha (the planes as the colour
    program began), as the REPREMULT kernel; alpha stays as the ops left it."""
    import numpy as np

    d = divisor(entered[3])
    with np.errstate(all="ignore"):
        for plane in planes[:3]:
            np.multiply(plane, d, out=plane)


def unpremultiplied(ops: Sequence[ColorOp | ImageOp]) -> list[ColorOp | ImageOp]:
    """The chain graded on unpremultiplied colour: each run of consecutive colour ops that kernels run between
    an Unpremult and a Repremult (one colour program each); image ops (resize, blur, place) stay outside, on
    premultiplied pixels, where filtering is right; an op only the host runs is unpremultiplied on the host.
    Ops that change nothing are left out first, so they neither split a run nor make one of their own (the
    round trip alone is not bit-exact: c / a * a may differ from c in the last bit)."""
    found: list[ColorOp | ImageOp] = []
    run: list[ColorOp] = []
    for op in live(ops):
        if isinstance(op, ColorOp) and op.runs_natively():
            run.append(op)
            continue
        found.extend(_wrapped(run))
        run = []
        found.append(UnpremultipliedOnHost(op) if isinstance(op, ColorOp) else op)
    return found + _wrapped(run)


def _wrapped(run: list[ColorOp]) -> list[ColorOp | ImageOp]:
    return [Unpremult(), *run, Repremult()] if run else []
