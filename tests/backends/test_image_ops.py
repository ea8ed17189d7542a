"""Each backend declares the image ops it computes by name (backends/base.py's ImageOpTable), and every backend
covers every image op oxi has: a missing kernel fails here, not as a job's error."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import oxi_cli.ops as ops
from oxi_cli.errors import ProcessingError
from oxi_cli.ops import ImageOp


def every_image_op() -> set[str]:
    return {op.name for name in ops.__all__ if isinstance(op := getattr(ops, name), type)
            and issubclass(op, ImageOp) and op is not ImageOp}


def test_every_backend_computes_every_image_op(each_backend):
    assert set(each_backend.image_ops) == every_image_op() == {"resize", "blur", "place"}


def test_every_cpu_image_op_has_a_numpy_stand_in_for_cold_kernels():
    from oxi_cli.backends.cpu.backend import STAND_INS

    assert set(STAND_INS) == every_image_op()


@dataclasses.dataclass(frozen=True)
class Shear(ImageOp):
    """An image op no backend has a kernel for."""

    name = "shear"

    def sample(self) -> ImageOp:
        return self


def test_an_image_op_a_backend_lacks_is_refused_in_one_line(each_backend):
    b = each_backend
    handle = b.upload([np.zeros((2, 2), np.float32)])
    with pytest.raises(ProcessingError, match=r"backend has no shear kernel"):
        b.spatial(handle, b.allocate(2, 2, 1), Shear())


def test_pixels_whose_taps_all_fall_outside_the_data_window_are_0_on_every_backend(each_backend):
    """A fit of a small data window in a large display window: most output pixels have no tap on a data pixel
    (their taps' count is 0) and must be 0, not 0 x an infinite neighbour; a windowed blur's grown edge too."""
    from oxi_cli.ops.blur import Blur
    from oxi_cli.ops.resize import displayed_resize
    from tests.ops.harness import run_spatial

    img = np.full((3, 4, 2), np.inf, np.float32)
    img[1, 1] = (1.0, -2.0)
    img[0, 0] = np.nan
    fit = displayed_resize(((10, 10, 4, 3), (0, 0, 40, 30)), (20, 15), "lanczos3", frame=(20, 15, 0, 0),
                           box=(0, 0, 20, 15))
    black = (fit.weights(0, 3, 15).count == 0)[:, None] | (fit.weights(1, 4, 20).count == 0)[None, :]
    assert black.any() and not black.all()
    got = run_spatial(each_backend, img, "resize", fit, (15, 20))
    assert (got[black] == 0).all()
    assert not np.isfinite(got[~black]).all()  # the taps that read data keep their NaN and Inf
    img = np.zeros((3, 4, 2), np.float32)
    img[1, 1] = 1.0
    blur = Blur(0.5).bound(((10, 10, 4, 3), (0, 0, 40, 30)))
    assert (blur.height, blur.width) == (7, 8)  # grown by R = 2 on each side, within the display window
    out = run_spatial(each_backend, img, "blur", blur, (7, 8))
    k = np.exp(-np.arange(-2, 3) ** 2 / 0.5)
    k /= k.sum()
    want = np.zeros((7, 8))
    want[1:6, 1:6] = np.outer(k, k)  # the one data pixel at (1, 1) of the data, (3, 3) of the grown window
    np.testing.assert_allclose(out[..., 0], want, atol=1e-7)
