"""OpenColorIO's own CPU processor as the oracle, and oxi's ops run the way the executor runs a chain."""

from __future__ import annotations

from typing import Any

import numpy as np
import PyOpenColorIO as OCIO

from oxi_cli.execute import run_chain


def ocio_whole(processor: Any, img: np.ndarray) -> np.ndarray:
    """The processor's LOSSLESS CPU renderer on (H, W, 3) float32."""
    px = np.ascontiguousarray(img, dtype=np.float32).reshape(-1, 3).copy()
    processor.getOptimizedCPUProcessor(OCIO.OPTIMIZATION_LOSSLESS).applyRGB(px)
    return px.reshape(img.shape)


def ocio_steps(processor: Any, img: np.ndarray) -> np.ndarray:
    """The processor's optimised ops applied one at a time, each by OCIO's LOSSLESS CPU renderer."""
    raw = OCIO.Config.CreateRaw()
    px = np.ascontiguousarray(img, dtype=np.float32).reshape(-1, 3).copy()
    for transform in processor.getOptimizedProcessor(OCIO.OPTIMIZATION_LOSSLESS).createGroupTransform():
        group = OCIO.GroupTransform()
        group.appendTransform(transform)
        raw.getProcessor(group).getOptimizedCPUProcessor(OCIO.OPTIMIZATION_LOSSLESS).applyRGB(px)
    return px.reshape(img.shape)


def ocio_reference(processor: Any, img: np.ndarray) -> np.ndarray:
    """What oxi must give: OCIO's whole processor on finite pixels. A pixel with NaN or Inf in it follows
    OCIO's ops one by one: OCIO's whole-processor renderers treat such pixels differently from one
    optimisation level to the next (ACEScg -> ACEScc of a NaN pixel: -0.36 LOSSLESS, -0.3584 DEFAULT),
    while each op's renderer is well defined."""
    finite = np.isfinite(img).all(axis=-1, keepdims=True)
    return np.where(finite, ocio_whole(processor, img), ocio_steps(processor, img))


def run_oxi(backend: Any, ops: list[Any], img: np.ndarray) -> np.ndarray:
    """The ops as the executor runs them (native runs fused, OCIO fallbacks on the host) on RGB planes."""
    planes = [np.ascontiguousarray(img[..., c]) for c in range(3)]
    handle = run_chain(backend, planes, ops, False)
    return np.stack(backend.download_planes(handle, np.float32), axis=-1)


def ocio_unpremultiplied(processor: Any, rgba: np.ndarray) -> np.ndarray:
    """What --unpremult must give on premultiplied (H, W, 4) float32, as OIIO's colorconvert(unpremult=1): a float64
    unpremultiply by the divisor (alpha, or 1 where alpha is under FLT_MIN or NaN: a glow at alpha 0 is graded
    undivided), the processor (ocio_reference), a float64 re-premultiply by the same divisor; alpha as it went in."""
    rgb, alpha = rgba[..., :3].astype(np.float64), rgba[..., 3:].astype(np.float64)
    with np.errstate(invalid="ignore"):
        divisor = np.where(alpha >= np.finfo(np.float32).tiny, alpha, 1.0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        straight = (rgb / divisor).astype(np.float32)
        graded = ocio_reference(processor, straight).astype(np.float64) * divisor
    out = rgba.astype(np.float64)
    out[..., :3] = graded
    return out
