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
