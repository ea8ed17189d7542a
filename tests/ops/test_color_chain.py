"""A fused colour chain gives exactly what applying its ops one at a time in float32 gives."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.backends.cpu.kernels import color
from oxi_cli.backends.cpu.kernels import half as halves
from oxi_cli.ops import (
    Aces2Output,
    Cdl,
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
from oxi_cli.ops.codes import CODE_NAMES
from oxi_cli.ops.program import compile_program
from tests.reference import hdr_image

ALPHA_MATRIX = Matrix.from_values(np.arange(16) * 0.05 + np.eye(4).ravel())


def _ops(seed: int) -> list:
    rng = np.random.default_rng(seed)
    table3 = rng.uniform(-0.2, 1.5, (17, 17, 17, 3)).astype(np.float32)
    table1 = np.sort(rng.uniform(-0.1, 2.0, (33, 3)), axis=0).astype(np.float32)
    return [
        Cdl(slope=(1.1, 0.95, 1.2), offset=(0.01, -0.02, 0.0), power=(1.1, 0.9, 1.3), sat=0.85),
        Matrix.from_values([0.9, 0.1, 0.0, 0.02, 0.05, 1.0, 0.0, 0.0, 0.0, 0.1, 0.95, -0.01]),
        Lut3d(table3, domain_min=(-0.5, -0.5, -0.5), domain_max=(4.0, 4.0, 4.0)),
        Cdl(slope=0.9, power=1.05, sat=1.1, style="asc"),
        Lut1d(table1, domain_max=(2.0, 2.0, 2.0)),
        Lut3d(table3, interp="trilinear"),
        ALPHA_MATRIX,
    ]


def _every_code(seed: int) -> list:
    """Ops that between them encode every op code (the 4x4 matrices as MATRIX_RGBA and MATRIX_SCALE_RGBA when
    there is alpha) but REPREMULT, which _orders puts first."""
    rng = np.random.default_rng(seed)
    half_table = np.stack([np.arange(65536, dtype=np.float32) % 977 * 0.01 - 1.0] * 3, axis=1)
    return [
        *_ops(seed),
        Unpremult(),
        Lut1d(half_table, half_domain=True),
        Exponent(gamma=(1.2, 0.8, 2.2), style="mirror"),
        ExponentLinear(gamma=(2.4, 2.4, 2.2), offset=(0.055, 0.055, 0.099)),
        ExponentLinear(gamma=(2.4, 2.4, 2.2), offset=(0.055, 0.055, 0.099), mirror=True, inverse=True),
        Log(base=2.0, log_slope=(0.1, 0.1, 0.1), lin_offset=(0.01, 0.01, 0.01)),
        Log(base=10.0, lin_break=(0.01, 0.01, 0.01), inverse=True),
        Range(min_in=-0.1, max_in=float(rng.uniform(1.5, 3.0)), min_out=0.0, max_out=1.0),
        ExposureContrast(exposure=0.5, contrast=1.2, pivot=0.18),
        Aces2Output(1000.0, (0.68, 0.32, 0.265, 0.69, 0.15, 0.06, 0.3127, 0.329)),
        Matrix.from_values([1.2, 0.0, 0.0, 0.0, 0.9, 0.0, 0.0, 0.0, 1.1], (0.01, 0.0, -0.01)),
        Matrix.from_values(np.diag([1.2, 0.9, 1.1, 0.8]).ravel(), (0.0, 0.02, 0.0, 0.05)),
        ALPHA_MATRIX,
    ]


def _orders(seed: int) -> list[list]:
    """The ops as listed, reversed and shuffled: each op code first, in the middle and last somewhere; a
    Repremult before each, as it reads the pixel as it entered the program, its own input only there (the
    premultiplied tests check it in a chain against OCIO)."""
    ops = _every_code(seed)
    shuffled = [ops[i] for i in np.random.default_rng(seed).permutation(len(ops))]
    return [[Repremult(), *order] for order in (ops, ops[::-1], shuffled)]


def test_every_op_code_has_a_cpu_loop():
    assert sorted(color.all_loops()) == list(range(len(CODE_NAMES)))


def test_the_chains_below_use_every_op_code():
    codes = {int(c) for c in compile_program(_orders(0)[0], has_alpha=True).ops[:, 0]}
    assert codes == set(range(len(CODE_NAMES)))


def _op_by_op(backend, img: np.ndarray, ops: list, has_alpha: bool, half_out: bool) -> np.ndarray:
    """Each op alone on float32 planes (values stay float32 between ops), narrowed to half at the end as
    the kernels narrow."""
    planes = backend.upload(img.copy())
    for op in ops:
        backend.color_chain(planes, planes, [op], has_alpha)
    out = backend.download(planes)
    return halves.converted(out, np.float16) if half_out else out


# On the host alone: on the GPU each chain here is a shader of its own, 10-20 s to compile on lavapipe (150 s for
# these cases). tests/backends/test_op_codes.py runs every op code on each accelerator and
# test_accelerator_parity.py fused chains.
@pytest.mark.parametrize("block", [None, 97], ids=["block-default", "block-97"])
@pytest.mark.parametrize("order", range(3))
@pytest.mark.parametrize("channels", [3, 4, 6])
@pytest.mark.parametrize(
    ("half_in", "half_out", "in_place"),
    [(False, False, True), (True, True, True), (False, False, False), (True, True, False), (True, False, False),
     (False, True, False)],
    ids=["f32-in-place", "half-in-place", "f32-f32", "half-half", "half-f32", "f32-half"],
)
def test_chain_of_every_op_code_equals_op_by_op_bit_for_bit(
    cpu_backend, monkeypatch, half_in, half_out, in_place, channels, order, block
):
    if (half_in or half_out) and not halves.IN_KERNELS:
        pytest.skip("half planes are widened to float32 before the kernels on this CPU")
    if block is not None:  # several blocks, the last one short
        monkeypatch.setattr(color, "BLOCK_PIXELS", block)
    img = hdr_image((23, 31, channels), seed=5 + order, nonfinite=True)
    if half_in:
        with np.errstate(over="ignore"):
            img = img.astype(np.float16).astype(np.float32)
    has_alpha = channels >= 4
    ops = _orders(1)[order]
    src = cpu_backend.upload(img.astype(np.float16) if half_in else img.copy(), half=half_in)
    dst = src if in_place else cpu_backend.allocate(23, 31, channels, half=half_out)
    cpu_backend.color_chain(src, dst, ops, has_alpha)
    got = cpu_backend.download(dst, np.empty(img.shape, np.float16 if half_out else np.float32))
    want = _op_by_op(cpu_backend, img, ops, has_alpha, half_out)
    _assert_same_bits(got, want)


def _assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Every bit of every number (signed zeros included), NaN in the same places. A NaN's sign and payload
    are left open, as IEEE 754 and LLVM leave them (LLVM may swap the operands of a sum of two NaNs)."""
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bits = np.uint16 if got.dtype == np.float16 else np.uint32
    np.testing.assert_array_equal(got.view(bits)[~nan], want.view(bits)[~nan])


def test_fused_chain_into_a_separate_destination_carries_other_channels(each_backend):
    img = hdr_image((9, 7, 6), seed=2)
    src = each_backend.upload(img.copy())
    dst = each_backend.allocate(9, 7, 6)
    each_backend.color_chain(src, dst, _ops(3)[:3], has_alpha=True)
    # The chain has no alpha-touching matrix: alpha and the extra channels come through unchanged.
    np.testing.assert_array_equal(each_backend.download(dst)[..., 3:], img[..., 3:])
