"""The in-memory image: named channel planes in their file dtype plus what is needed to write the file back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from oxi_cli.colour_tags import ColourTag

# Pixel types oxi knows, and the numpy dtype each is held in.
PIXEL_DTYPES: dict[str, np.dtype] = {
    "half": np.dtype(np.float16),
    "float": np.dtype(np.float32),
    "uint32": np.dtype(np.uint32),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
}
COLOR_CHANNELS = ("R", "G", "B")


@dataclass
class ImageMeta:
    """Everything about a file except its pixels, so an output can be written 'like the input'.

    `pixel_types` maps channel name -> one of PIXEL_DTYPES' keys (what the file stores);
    `header` holds format-specific attributes (for EXR the whole OpenEXR header dict, windows included)
    which oxi carries through untouched; `compression` is the codec name (EXR) or None. `windows` is the
    (data, display) pair of (x, y, width, height) boxes the pixels and the picture occupy, for formats that
    keep them; None: the pixels are the whole picture at (0, 0). `colour` is the colour space a conversion left
    the pixels in (ColorOp.output_space): the writer tags the output with it in place of the input's colour
    attributes; None: nothing changed the space, the input's attributes stand.
    """

    format: str
    pixel_types: dict[str, str]
    compression: str | None = None
    header: dict[str, Any] = field(default_factory=dict)
    windows: tuple[tuple[int, int, int, int], tuple[int, int, int, int]] | None = None
    levels: str = "one"  # "one", or "mipmap"/"ripmap": the file holds reduced-resolution levels of these pixels
    colour: ColourTag | None = None


@dataclass
class Image:
    """Channel planes, each (height, width); integer formats keep their integer dtype until processed.

    `parts`: the file's other parts (EXR subimages), in file order, each an Image of its own with its own windows,
    channels, pixel types, compression and attributes; this image is the first part. Empty for a one-part file.
    """

    width: int
    height: int
    planes: dict[str, np.ndarray]
    meta: ImageMeta
    parts: list[Image] = field(default_factory=list)

    @property
    def channels(self) -> list[str]:
        return list(self.planes)

    def all_parts(self) -> list[Image]:
        """This part and the file's others, in file order."""
        return [self, *self.parts]


def to_float32(plane: np.ndarray, pixel_type: str) -> np.ndarray:
    """Integer image data maps to [0, 1]; float data is widened as is."""
    if pixel_type == "uint8":
        return plane.astype(np.float32) * np.float32(1.0 / 255.0)
    if pixel_type == "uint16":
        return plane.astype(np.float32) * np.float32(1.0 / 65535.0)
    return plane.astype(np.float32, copy=False)


def from_float32(plane: np.ndarray, pixel_type: str) -> np.ndarray:
    """Back to the stored type: integers round to nearest and clamp (NaN becomes 0); floats narrow."""
    if pixel_type in ("uint8", "uint16"):
        top = 255.0 if pixel_type == "uint8" else 65535.0
        scaled = np.nan_to_num(plane * np.float32(top), nan=0.0, posinf=top, neginf=0.0)
        return np.clip(np.rint(scaled), 0, top).astype(PIXEL_DTYPES[pixel_type])
    if pixel_type == "uint32":
        # In float64: float32 rounds the bound 2**32 - 1 up to 2**32, which no uint32 holds (a pad or crop
        # copies ids near the top unchanged, and their float32 values sit on that bound).
        clean = np.nan_to_num(plane.astype(np.float64), nan=0.0, posinf=4294967295.0, neginf=0.0)
        return np.clip(np.rint(clean), 0, 4294967295.0).astype(np.uint32)
    with np.errstate(over="ignore"):  # beyond half's range is +-Inf, as OpenEXR itself converts
        return plane.astype(PIXEL_DTYPES[pixel_type], copy=False)
