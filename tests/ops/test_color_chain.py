"""A fused colour chain gives exactly what applying its ops one at a time gives."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.ops import Cdl, Lut1d, Lut3d, Matrix
from tests.reference import hdr_image


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
        Matrix.from_values(np.arange(16) * 0.05 + np.eye(4).ravel()),
    ]


@pytest.mark.parametrize("channels", [3, 4, 6])
def test_fused_chain_equals_op_by_op_bit_for_bit(cpu_backend, channels):
    img = hdr_image((23, 31, channels), seed=5, nonfinite=True)
    has_alpha = channels >= 4
    ops = _ops(1)
    one_by_one = cpu_backend.upload(img.copy())
    for op in ops:
        cpu_backend.color_chain(one_by_one, one_by_one, [op], has_alpha)
    fused = cpu_backend.upload(img.copy())
    cpu_backend.color_chain(fused, fused, ops, has_alpha)
    np.testing.assert_array_equal(cpu_backend.download(fused), cpu_backend.download(one_by_one))


def test_fused_chain_into_a_separate_destination_carries_other_channels(cpu_backend):
    img = hdr_image((9, 7, 6), seed=2)
    src = cpu_backend.upload(img.copy())
    dst = cpu_backend.allocate(9, 7, 6)
    cpu_backend.color_chain(src, dst, _ops(3)[:3], has_alpha=True)
    # The chain has no alpha-touching matrix: alpha and the extra channels come through unchanged.
    np.testing.assert_array_equal(cpu_backend.download(dst)[..., 3:], img[..., 3:])
