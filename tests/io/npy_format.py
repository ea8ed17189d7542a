"""A toy image format for the registry's tests: an (H, W, C) float32 .npy array, RGB or RGBA, nothing else."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from oxi_cli.errors import InputError
from oxi_cli.image import Image, ImageMeta
from oxi_cli.io.common import ImageSpec

NAMES = {3: ["R", "G", "B"], 4: ["R", "G", "B", "A"]}


def read(path: Path) -> Image:
    pixels = np.load(path)
    if pixels.ndim != 3 or pixels.shape[2] not in NAMES:
        raise InputError(f"{path}: not an (H, W, 3 or 4) array")
    names = NAMES[pixels.shape[2]]
    planes = {n: np.ascontiguousarray(pixels[..., i], np.float32) for i, n in enumerate(names)}
    return Image(pixels.shape[1], pixels.shape[0], planes, ImageMeta("npy", dict.fromkeys(names, "float")))


def read_spec(path: Path) -> ImageSpec:
    shape = np.load(path, mmap_mode="r").shape
    names = NAMES[shape[2]]
    return ImageSpec(shape[1], shape[0], names, ImageMeta("npy", dict.fromkeys(names, "float")))


def write(image: Image, path: Path, compression: str | None = None) -> None:
    names = [n for n in ("R", "G", "B", "A") if n in image.planes]
    with open(path, "wb") as f:
        np.save(f, np.stack([image.planes[n].astype(np.float32) for n in names], axis=-1))


def codec(text: str) -> str:
    return text
