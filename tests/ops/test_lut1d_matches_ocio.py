"""1D LUTs on each backend against OpenColorIO reading the same numbers from a 1D .cube file."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.ops import Lut1d
from tests import reference as ref
from tests.ops.harness import (
    assert_bits_equal,
    assert_close,
    assert_separate_destination_matches_in_place,
    ocio_apply,
    ocio_file,
    run_color,
    write_cube,
)

# Absolute, on outputs of about -0.3..1.5, as for 3D LUTs.
ATOL = 1e-5
SHAPE = (48, 64, 4)
UNIT = ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
# name -> (size, domain_min, domain_max)
CASES = {
    "size2": (2, *UNIT),
    "size17": (17, *UNIT),
    "size1024": (1024, *UNIT),
    "size4096_domain": (4096, (-0.125, 0.0, 0.5), (1.5, 8.0, 2.0)),
}


def curve_rows(size: int, seed: int) -> np.ndarray:
    """(size, 3) float32: a different wiggly, mostly rising curve per channel, leaving 0..1 on both sides."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, size)[:, None]
    gamma = rng.uniform(0.4, 2.2, 3)
    wiggle = 0.1 * np.sin(x * rng.uniform(3.0, 20.0, 3) + rng.uniform(0.0, 6.3, 3))
    return (1.6 * x**gamma - 0.2 + wiggle).astype(np.float32)


@pytest.fixture(scope="module")
def luts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lut1d")
    made = {}
    for seed, (name, (size, lo, hi)) in enumerate(CASES.items()):
        rows = curve_rows(size, seed)
        made[name] = rows, write_cube(folder / f"{name}.cube", rows, dims=1, lo=lo, hi=hi)
    return made


@pytest.mark.parametrize("case", CASES)
def test_lut1d_matches_ocio(each_backend, luts, case):
    # Out-of-domain inputs clamp to the ends; NaN takes the first entry, ±Inf the last / first (as OCIO).
    size, lo, hi = CASES[case]
    rows, path = luts[case]
    op = Lut1d(rows, domain_min=lo, domain_max=hi)
    img = ref.lut_inputs(SHAPE, lo, hi, seed=size)
    want = ocio_apply(ocio_file(path, OCIO.INTERP_LINEAR), img)
    got = run_color(each_backend, img, "lut1d", op)
    assert_close(got[..., :3], want[..., :3], rtol=0.0, atol=ATOL, inputs=img, what=case)
    assert_bits_equal(got[..., 3], img[..., 3], "alpha must pass through the 1D LUT bit-exact")
    assert_close(want[..., :3], ref.lut1d(img[..., :3], rows, lo, hi), rtol=0.0, atol=ATOL, what="reference")


def test_lut1d_into_a_separate_destination_matches_in_place(each_backend, luts):
    rows, _ = luts["size17"]
    img = ref.lut_inputs(SHAPE, *UNIT, seed=2)
    assert_separate_destination_matches_in_place(each_backend, img, "lut1d", Lut1d(rows))
