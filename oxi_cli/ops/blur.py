"""Separable Gaussian blur: taps -R..R with R = ceil(3σ), normalised, black outside the data window."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from oxi_cli.errors import OpError
from oxi_cli.ops.base import AxisStep, Box, ImageOp
from oxi_cli.ops.resize import Axis, Resize, Taps
from oxi_cli.ops.step import FLAG, Deferred, Param, Step, StepArgs

if TYPE_CHECKING:
    import numpy as np  # annotations only: numpy loads when a function here runs, not for `oxi --help`

MAX_SIGMA = 2000.0


Windows = tuple[Box, Box]


@dataclass(frozen=True)
class Blur(ImageOp):
    """Gaussian of standard deviation `sigma` pixels on every channel, over an image whose data window is its
    display window (edges repeat); `bound` gives the blur of any other windows."""

    sigma: float
    keep: bool = False  # keep the input's data window (else it grows by the reach, within the display window)
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
        import numpy as np

        k = np.arange(-self.radius, self.radius + 1, dtype=np.float64)
        w = np.exp(-(k * k) / (2.0 * self.sigma * self.sigma))
        return w / w.sum()

    def axis_step(self, axis: int, size: int) -> AxisStep:
        return AxisStep(size, size, radius=self.radius)

    def work(self, width: int, height: int, channels: int) -> float:
        return float(width) * height * channels * 2 * (2 * self.radius + 1)  # two passes of 2R + 1 taps

    def bound(self, windows: Windows) -> ImageOp:
        """This blur of an image with these (data, display) windows. Data = display: itself. Otherwise the
        pixels outside the data window are black (OIIO's reading: a tap clamps to the display window and is
        black unless that lands on data) and the data window grows by the reach, within the display window
        (a data window already past it stays), unless `keep`."""
        data, display = windows
        if data == display:
            return self
        rows = _axis(data[1], data[3], display[1], display[3], 0 if self.keep else self.radius)
        cols = _axis(data[0], data[2], display[0], display[2], 0 if self.keep else self.radius)
        width, height = cols[1] - cols[0], rows[1] - rows[0]
        grid = (Axis((display[1] - data[1], display[3]), (display[1] - rows[0], display[3])),
                Axis((display[0] - data[0], display[2]), (display[0] - cols[0], display[2])))
        return WindowBlur(width, height, "gaussian", grid=grid, display=display, sigma=self.sigma,  # type: ignore[arg-type]
                          keep=self.keep)

    def for_part(self, first: Windows, part: Windows) -> ImageOp:
        return self.bound(part)


def _axis(start: int, length: int, shown: int, shown_length: int, reach: int) -> tuple[int, int]:
    """The output data range along one axis: the data range grown by `reach`, the growth stopped at the
    display window's edge (a data range already past it keeps its own)."""
    low = max(start - reach, min(shown, start))
    high = min(start + length + reach, max(shown + shown_length, start + length))
    return low, high


@dataclass(frozen=True)
class WindowBlur(Resize):
    """A Gaussian blur of an image whose data window is not its display window: a resample at scale 1 whose
    taps (ops.resize.axis_weights) read black outside the data window; runs on the resize kernels."""

    sigma: float = 1.0
    keep: bool = False
    name: ClassVar[str] = "blur"
    kernel: ClassVar[str] = "resize"

    def __post_init__(self) -> None:  # no resize filter to check: the taps are the Gaussian's (`taps`)
        Blur(self.sigma)

    def taps(self, axis: int) -> Taps:
        return Taps("gaussian", self.grid[axis] if self.grid is not None else None, self.sigma)

    def work(self, width: int, height: int, channels: int) -> float:
        taps = 2 * math.ceil(3.0 * self.sigma) + 1
        return float(channels) * (self.width * height + self.width * self.height) * taps

    def for_part(self, first: Windows, part: Windows) -> ImageOp:
        return Blur(self.sigma, self.keep).bound(part)


@dataclass(frozen=True)
class BlurStep(Deferred):
    """A blur bound to the windows of the image it meets (Blur.bound)."""

    blur: Blur

    def resolve(self, width: int, height: int, windows: bool = True, frame: Windows | None = None) -> list[ImageOp]:
        return [self.blur.bound(frame) if frame is not None else self.blur]


def _build(args: StepArgs) -> BlurStep:
    if args.one_of(("sigma", "radius")) == "sigma":
        blur = Blur(args.number("sigma"))  # type: ignore[arg-type]
    else:
        blur = Blur.from_radius(args.number("radius"))  # type: ignore[arg-type]
    return BlurStep(Blur(blur.sigma, args.switch("keep_window")))


STEP = Step(
    "blur",
    summary="Gaussian blur on every channel.",
    value=Param("sigma", "Standard deviation in pixels.", metavar="SIGMA"),
    params=(Param("radius", "Kernel reach in pixels; sigma = radius / 3."),
            Param("keep_window", "Keep the input's data window (EXR; default: it grows by the blur's reach, "
                  "within the display window).", kind=FLAG)),
    build=_build,
    run_help="gaussian sigma in pixels; or radius=R",
    examples="""\b
Examples:
  oxi blur plate.exr soft.exr --sigma 2.25
  oxi blur plate.exr soft.exr --radius 9        # sigma = 3
  oxi blur render.exr soft.exr --sigma 2 --keep-window   # the data window stays the input's
  oxi blur shots/ -o soft/ --sigma 2 --continue-on-error --json > blur.jsonl
\b
Gaussian of standard deviation sigma pixels, taps -R..R with R = ceil(3 sigma), normalised. Outside an EXR's
data window pixels are black (alpha 0), as OpenEXR and OIIO read them, and the data window grows by R within
the display window (--keep-window keeps it); where data and display edges meet, the edge repeats.
(oiiotool --blur W is sigma = W/4; libvips gaussblur cuts its mask near 1.8 sigma: the tools differ.)
""",
)
