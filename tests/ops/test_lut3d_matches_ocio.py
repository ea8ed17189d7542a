"""3D LUTs on each backend against OpenColorIO (sizes 17..65, domains) and a float64 reference (256³)."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.ops import Lut3d
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

# Absolute, on LUT outputs of about -0.4..1.6: the float32 index maths (domain scaling, fractions) alone
# moves results by ~1e-6 on these tables; 1e-5 leaves room for that, not for a wrong corner or weight.
ATOL = 1e-5
SHAPE = (48, 64, 4)
INTERPS = {"tetrahedral": OCIO.INTERP_TETRAHEDRAL, "trilinear": OCIO.INTERP_LINEAR}
UNIT = ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
# name -> (size, domain_min, domain_max)
CASES = {
    "size17": (17, *UNIT),
    "size33": (33, *UNIT),
    "size65": (65, *UNIT),
    "size33_domain": (33, (-0.125, -0.05, 0.0), (1.5, 2.0, 4.0)),
}


def smooth_rows(size: int, seed: int) -> np.ndarray:
    """(size³, 3) float32 rows in .cube order (red fastest): a colour matrix, a wave and a little noise, so
    neighbouring cells differ (wrong corners show) and values leave 0..1 on both sides (about -0.4..1.9)."""
    rng = np.random.default_rng(seed)
    axis = np.linspace(0.0, 1.0, size, dtype=np.float32)
    r, g, b = axis[None, None, :, None], axis[None, :, None, None], axis[:, None, None, None]

    def linear(m: np.ndarray) -> np.ndarray:
        # (blue, green, red, 3) grid of m @ [r, g, b], built by broadcasting: at 256³ each array is 200 MB.
        return r * m[:, 0] + g * m[:, 1] + b * m[:, 2]

    rows = linear((np.eye(3) + rng.uniform(-0.3, 0.3, (3, 3))).astype(np.float32))
    wave = linear(rng.uniform(2.0, 6.0, (3, 3)).astype(np.float32))
    wave += rng.uniform(0, 6.3, 3).astype(np.float32)
    rows += np.float32(0.25) * np.sin(wave, out=wave)
    del wave
    noise = rng.random(rows.shape, dtype=np.float32)
    rows += np.float32(0.06) * (noise - np.float32(0.5))
    return rows.reshape(-1, 3)


@pytest.fixture(scope="module")
def luts(tmp_path_factory):
    """name -> (rows, .cube path); each LUT gets its own file (OCIO caches files by path)."""
    folder = tmp_path_factory.mktemp("lut3d")
    made = {}
    for seed, (name, (size, lo, hi)) in enumerate(CASES.items()):
        rows = smooth_rows(size, seed)
        made[name] = rows, write_cube(folder / f"{name}.cube", rows, dims=3, lo=lo, hi=hi)
    return made


@pytest.mark.parametrize("interp", INTERPS)
@pytest.mark.parametrize("case", CASES)
def test_lut3d_matches_ocio(each_backend, luts, case, interp):
    size, lo, hi = CASES[case]
    rows, path = luts[case]
    op = Lut3d.from_red_fastest(rows, size, domain_min=lo, domain_max=hi, interp=interp)
    img = ref.lut_inputs(SHAPE, lo, hi, seed=size)
    want = ocio_apply(ocio_file(path, INTERPS[interp]), img)
    got = run_color(each_backend, img, "lut3d", op)
    assert_close(got[..., :3], want[..., :3], rtol=0.0, atol=ATOL, inputs=img, what=f"{case} {interp}")
    assert_bits_equal(got[..., 3], img[..., 3], "alpha must pass through the 3D LUT bit-exact")


@pytest.mark.parametrize("interp", INTERPS)
def test_float64_lut3d_reference_matches_ocio(luts, interp):
    # The 256³ test below trusts reference.lut3d; here it earns that trust against OCIO on 33³ + a domain.
    size, lo, hi = CASES["size33_domain"]
    rows, path = luts["size33_domain"]
    table = rows.reshape(size, size, size, 3).transpose(2, 1, 0, 3)
    img = ref.lut_inputs(SHAPE, lo, hi, seed=5)
    want = ocio_apply(ocio_file(path, INTERPS[interp]), img)[..., :3]
    assert_close(ref.lut3d(img[..., :3], table, lo, hi, interp), want, rtol=0.0, atol=ATOL, what="reference")


BIG = 256, (-0.5, 0.0, 0.0), (1.5, 1.0, 2.0)


@pytest.fixture(scope="module")
def big_rows():
    return smooth_rows(BIG[0], 256)


@pytest.mark.parametrize("interp", INTERPS)
def test_lut3d_256_matches_float64_reference(each_backend, big_rows, interp):
    # 256³ is beyond OCIO's 129 limit but real LUTs use it; 64x48 pixels keep this fast.
    size, lo, hi = BIG
    op = Lut3d.from_red_fastest(big_rows, size, domain_min=lo, domain_max=hi, interp=interp)
    img = ref.lut_inputs(SHAPE, lo, hi, seed=256)
    want = ref.lut3d(img[..., :3], op.table, lo, hi, interp)
    got = run_color(each_backend, img, "lut3d", op)
    assert_close(got[..., :3], want, rtol=0.0, atol=ATOL, inputs=img, what=f"256³ {interp}")


def test_lut3d_into_a_separate_destination_matches_in_place(each_backend, luts):
    rows, _ = luts["size17"]
    op = Lut3d.from_red_fastest(rows, 17)
    img = ref.lut_inputs(SHAPE, *UNIT, seed=3)
    assert_separate_destination_matches_in_place(each_backend, img, "lut3d", op)
