"""Sequences to make movies of, and a float64 reading of decoded Y'CbCr by the equations of BT.709/BT.2020."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from tests.cli.conftest import write_exr

SDR = ("--from", "ACEScg", "--display", "sRGB - Display", "--view", "Un-tone-mapped")
ACES_SDR = ("--from", "ACEScg", "--display", "sRGB - Display", "--view", "ACES 2.0 - SDR 100 nits (Rec.709)")


def smooth_frame(height: int, width: int, frame: int) -> np.ndarray:
    """Scene-linear RGBA a camera might see: soft gradients and a slow wave, different in every frame (so order
    shows), alpha a soft ramp."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    r = 0.05 + 0.8 * xx / width + 0.03 * (frame % 50)
    g = 0.05 + 0.6 * yy / height
    b = 0.2 + 0.15 * np.sin(xx / 11.0 + frame * 0.7) + 0.1 * yy / height
    a = np.clip(0.2 + 0.8 * xx / width, 0, 1)
    return np.stack([r, g, b, a], axis=-1)


def sequence(folder: Path, frames: list[int], size: tuple[int, int] = (128, 72), **attrs: object) -> str:
    """plate.####.exr in `folder` for each frame number; returns the pattern."""
    folder.mkdir(parents=True, exist_ok=True)
    w, h = size
    for f in frames:
        write_exr(folder / f"plate.{f:04d}.exr", smooth_frame(h, w, f), aovs=False, **attrs)
    return str(folder / "plate.####.exr")


def decoded(path: Path) -> list[av.VideoFrame]:
    with av.open(str(path)) as container:
        return list(container.decode(video=0))


def planes(frame: av.VideoFrame) -> tuple[list[np.ndarray], int]:
    """The frame's planes as stored (bit depth from its pixel format) and that depth."""
    name = frame.format.name
    bits = 12 if "12" in name else 10 if "10" in name else 8
    dtype = np.uint16 if bits > 8 else np.uint8
    out = [np.frombuffer(p, dtype=dtype).reshape(p.height, -1)[:, : p.width].astype(np.float64) for p in frame.planes]
    return out, bits


def to_rgb(frame: av.VideoFrame, kr: float = 0.2126, kb: float = 0.0722) -> np.ndarray:
    """R'G'B' in 0..1 from limited-range Y'CbCr, in float64 (Rec. ITU-R BT.709-6 section 3; BT.2020 with its Kr,
    Kb): chroma upsampled by linear interpolation from co-sited columns and, for 4:2:0, rows between lines."""
    (y, cb, cr, *_), bits = planes(frame)
    scale = 2.0 ** (bits - 8)
    y, cb, cr = (y / scale - 16) / 219, (cb / scale - 128) / 224, (cr / scale - 128) / 224
    cb, cr = (_upsample(c, y.shape) for c in (cb, cr))
    r = y + 2 * (1 - kr) * cr
    b = y + 2 * (1 - kb) * cb
    g = (y - kr * r - kb * b) / (1 - kr - kb)
    return np.stack([r, g, b], axis=-1)


def _upsample(c: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    h, w = shape
    if c.shape[0] != h:  # rows sited between lines 2k and 2k+1
        prev = np.concatenate([c[:1], c[:-1]])
        nxt = np.concatenate([c[1:], c[-1:]])
        rows = np.empty((2 * c.shape[0], c.shape[1]))
        rows[0::2] = 0.75 * c + 0.25 * prev
        rows[1::2] = 0.75 * c + 0.25 * nxt
        c = rows[:h]
    if c.shape[1] != w:  # columns co-sited with the even luma columns
        nxt = np.concatenate([c[:, 1:], c[:, -1:]], axis=1)
        cols = np.empty((c.shape[0], 2 * c.shape[1]))
        cols[:, 0::2] = c
        cols[:, 1::2] = 0.5 * (c + nxt)
        c = cols[:, :w]
    return c


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2))
    return 10 * np.log10(1.0 / mse) if mse > 0 else float("inf")
