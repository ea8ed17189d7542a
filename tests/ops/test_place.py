"""Place (the pad and crop of --fit pad/fill) on each backend: every value copied bit for bit (NaN payloads,
±Inf, negatives, half), zeros in every channel outside the source; a piece computes what the whole does."""

from __future__ import annotations

import numpy as np
import pytest

from oxi_cli.errors import OpError
from oxi_cli.ops import Place
from tests import reference as ref
from tests.ops.harness import assert_bits_equal, run_spatial

SRC = (23, 37)  # odd on purpose
# name -> Place: bars on every side, overflow cut on every side, one axis each, a box missing the source
CASES = {
    "pad_all_sides": Place(50, 40, 5, 7),
    "crop_all_sides": Place(20, 10, -5, -7),
    "crop_x_pad_y": Place(30, 41, -3, 11),
    "pad_x_crop_y": Place(44, 9, 4, -6),
    "source_outside_box": Place(3, 3, 100, -50),
}


def placed(img: np.ndarray, op: Place) -> np.ndarray:
    """The definition: output (r, c) is input (r - y, c - x) where that exists, else 0."""
    out = np.zeros((op.height, op.width, img.shape[2]), img.dtype)
    h, w = img.shape[:2]
    ys, xs = np.arange(op.height) - op.y, np.arange(op.width) - op.x
    ry, rx = (ys >= 0) & (ys < h), (xs >= 0) & (xs < w)
    out[np.ix_(ry, rx)] = img[np.ix_(ys[ry], xs[rx])]
    return out


@pytest.mark.parametrize("channels", [1, 3, 4, 5])
@pytest.mark.parametrize("case", CASES)
def test_place_copies_every_value_and_zeroes_the_rest(each_backend, case, channels):
    img = ref.hdr_image((*SRC, channels), seed=channels, nonfinite=True)
    op = CASES[case]
    got = run_spatial(each_backend, img, "place", op, (op.height, op.width))
    assert_bits_equal(got, placed(img, op), f"place {op}")


def test_half_pixels_stay_bit_exact_through_place(each_backend):
    img = ref.hdr_image((*SRC, 4), seed=9, nonfinite=True).astype(np.float16)
    op = CASES["crop_x_pad_y"]
    src = each_backend.upload([np.ascontiguousarray(img[..., c]) for c in range(4)], half=True)
    dst = each_backend.allocate(op.height, op.width, 4, half=True)
    each_backend.spatial(src, dst, op)
    got = np.stack(each_backend.download_planes(dst, np.float16), axis=-1)
    np.testing.assert_array_equal(got.view(np.uint16), placed(img, op).view(np.uint16))


@pytest.mark.parametrize("case", CASES)
def test_a_piece_of_place_computes_what_the_whole_does(each_backend, case):
    """The planner's view: each output range reads the input range axis_step names, and the op's piece on
    that input range gives the whole result's pixels there."""
    img = ref.hdr_image((*SRC, 3), seed=4, nonfinite=True)
    op = CASES[case]
    whole = placed(img, op)
    for (r0, r1), (c0, c1) in [((0, 1), (0, op.width)), ((1, op.height - 1), (2, op.width)),
                               ((op.height - 1, op.height), (op.width - 1, op.width))]:
        (sy0, sy1), (sx0, sx1) = (
            (int(a[0]), int(b[0])) for a, b in (
                op.axis_step(0, SRC[0]).needs(np.array([r0]), np.array([r1])),
                op.axis_step(1, SRC[1]).needs(np.array([c0]), np.array([c1])),
            )
        )
        assert 0 <= sy0 < sy1 <= SRC[0] and 0 <= sx0 < sx1 <= SRC[1], "every range reads at least one row"
        piece = op.piece((SRC[0], op.height, sy0, r0, r1), (SRC[1], op.width, sx0, c0, c1))
        got = run_spatial(each_backend, img[sy0:sy1, sx0:sx1], "place", piece, (r1 - r0, c1 - c0))
        assert_bits_equal(got, whole[r0:r1, c0:c1], f"{case} rows {r0}:{r1} cols {c0}:{c1}")


def test_place_moves_the_data_window_and_keeps_the_display_window():
    data, display = (10, 20, 37, 23), (0, 0, 64, 48)
    assert Place(64, 48, 10, 20).windows(data, display) == ((0, 0, 64, 48), display)
    assert Place(30, 10, -3, -4).windows(data, display) == ((13, 24, 30, 10), display)


@pytest.mark.parametrize("kwargs", [dict(width=0, height=5), dict(width=5, height=5, x=1.5),
                                    dict(width=5, height=(1 << 20) + 1), dict(width=5, height=5, y=-(1 << 21))])
def test_bad_boxes_are_refused(kwargs):
    with pytest.raises(OpError):
        Place(**kwargs)
