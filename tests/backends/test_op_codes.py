"""The one table of op codes (ops/codes.py) against the backends: every code runs on each accelerator as on the
host, and has one WGSL function on the GPU (tests/ops/test_color_chain.py checks every code has a CPU loop). A code
the GPU lacks fails here, and is a shader that does not compile, never a silent run of another op's maths."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from oxi_cli.ops import (
    Aces2Output,
    Cdl,
    ColorOp,
    Exponent,
    ExponentLinear,
    ExposureContrast,
    Log,
    Lut1d,
    Lut3d,
    Matrix,
    Range,
    Repremult,
    Unpremult,
)
from oxi_cli.ops.codes import CODE_NAMES, wgsl_entry
from tests.ops.harness import assert_close

# A camera log whose inverse stays finite up to the samples' 60.
CAMERA_LOG = {"base": 10.0, "log_slope": (2.0, 1.8, 2.2), "log_offset": (0.5, 0.4, 0.6), "lin_offset": (0.01,) * 3,
              "lin_break": (0.01, 0.02, 0.005)}
REC709 = (0.64, 0.33, 0.3, 0.6, 0.15, 0.06, 0.3127, 0.329)


def _half_table() -> np.ndarray:
    """A half-domain table: sign(x) * |x| ** 0.45 at every half value, Inf and NaN rows as OCIO loads them."""
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore"):
        y = np.sign(x) * np.abs(x) ** 0.45
    top = float(np.finfo(np.float32).max)
    return np.repeat(np.nan_to_num(y, nan=0.0, posinf=top, neginf=-top).astype(np.float32)[:, None], 3, axis=1)


def _table(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-0.2, 1.5, shape).astype(np.float32)


# One op per code, and whether the chain carries alpha: the op's encode() must give that code.
SAMPLES: dict[str, tuple[Callable[[], ColorOp], bool]] = {
    "CDL_NOCLAMP": (lambda: Cdl((1.1, 0.9, 1.2), (0.01, -0.02, 0.03), (1.2, 0.8, 1.1), 0.9), False),
    "CDL_ASC": (lambda: Cdl((1.1, 0.9, 1.2), (0.01, -0.02, 0.03), (1.2, 0.8, 1.1), 0.9, "asc"), False),
    "MATRIX_RGB": (lambda: Matrix.from_values([1.1, 0.2, -0.1, 0.05, 0.9, 0.05, -0.02, 0.1, 1.0], (0.01, 0, 0)), False),
    "MATRIX_RGBA": (lambda: Matrix.from_values([1.1, 0.2, -0.1, 0.1, 0.05, 0.9, 0.05, 0, -0.02, 0.1, 1.0, 0,
                                                0.1, 0, 0, 0.9]), True),
    "LUT1D": (lambda: Lut1d(_table((33, 3), 1), (-0.25, 0.0, 0.0), (1.5, 2.0, 1.0)), False),
    "LUT3D_TETRAHEDRAL": (lambda: Lut3d(_table((9, 9, 9, 3), 2)), False),
    "LUT3D_TRILINEAR": (lambda: Lut3d(_table((9, 9, 9, 3), 2), interp="trilinear"), False),
    "LUT1D_HALF": (lambda: Lut1d(_half_table(), half_domain=True), False),
    "EXPONENT": (lambda: Exponent((2.2, 1.8, 0.45), "mirror"), False),
    "MONCURVE_FWD": (lambda: ExponentLinear((2.4,) * 3, (0.055,) * 3), False),
    "MONCURVE_REV": (lambda: ExponentLinear((2.4,) * 3, (0.055,) * 3, mirror=True, inverse=True), False),
    "LIN_TO_LOG": (lambda: Log(**CAMERA_LOG), False),
    "LOG_TO_LIN": (lambda: Log(**CAMERA_LOG, inverse=True), False),
    "RANGE": (lambda: Range(-0.1, 2.0, 0.0, 1.0), False),
    "EXPOSURE_CONTRAST": (lambda: ExposureContrast(0.7, 1.3, 1.1, 0.2, "video"), False),
    "ACES2_OUTPUT": (lambda: Aces2Output(100.0, REC709), False),
    "MATRIX_SCALE": (lambda: Matrix.from_values([1.5, 0, 0, 0, 0.5, 0, 0, 0, 2.0], (0.1, 0, -0.2)), False),
    "MATRIX_SCALE_RGBA": (lambda: Matrix.from_values([1.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 2.0, 0, 0, 0, 0, 0.5],
                                                     (0.1, 0, -0.2, 0.25)), True),
    "UNPREMULT": (Unpremult, True),
    "REPREMULT": (Repremult, True),
}


def _pixels() -> np.ndarray:
    """Display-range values, negatives and some HDR ones, RGBA (alpha from 0 to 1)."""
    rng = np.random.default_rng(5)
    img = rng.uniform(-0.25, 1.5, (16, 24, 4))
    img[:4, :, :3] = rng.uniform(1.0, 60.0, (4, 24, 3))
    img[..., 3] = rng.uniform(0.0, 1.0, (16, 24))
    return img.astype(np.float32)


def _run(backend, op: ColorOp, has_alpha: bool, img: np.ndarray) -> np.ndarray:
    src = backend.upload(img.copy())
    backend.color_chain(src, src, [op], has_alpha)
    return np.array(backend.download(src), dtype=np.float32, copy=True)


def test_every_code_has_one_sample_op_that_encodes_to_it():
    assert list(SAMPLES) == list(CODE_NAMES), "add a sample op for each new code (and only for codes)"
    for code, name in enumerate(CODE_NAMES):
        make, has_alpha = SAMPLES[name]
        assert make().encode(has_alpha).code == code, name


def test_every_code_has_exactly_one_wgsl_function_and_nothing_else_is_named_so():
    from oxi_cli.backends.gpu.shaders import render

    source = render("color.wgsl", {"VEC4": True, "CH": 4, "ALPHA": False, "CHAIN": ""})
    defined = re.findall(r"^fn (op_\w+)\(", source, flags=re.MULTILINE)
    assert sorted(defined) == sorted(wgsl_entry(code) for code in range(len(CODE_NAMES)))
    assert "default" not in source.split("@compute")[0].split("fn op_", 1)[1], "no fallback branch for codes"


@pytest.mark.parametrize("name", CODE_NAMES)
def test_each_code_runs_on_each_accelerator_as_on_the_host(each_accelerator, cpu_backend, name):
    # Another op's maths would be off by far more than the backends' few-ulp differences (ACES 2.0's are the
    # largest: 1e-4 of the display range).
    make, has_alpha = SAMPLES[name]
    op, img = make(), _pixels()
    want = _run(cpu_backend, op, has_alpha, img)
    assert np.isfinite(want).mean() > 0.9, f"{name}: the sample is mostly out of the op's range"
    got = _run(each_accelerator, op, has_alpha, img)
    assert_close(got, want, rtol=1e-4, scale=1.0, inputs=img, what=f"{name} on {each_accelerator.name}")
