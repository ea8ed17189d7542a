"""Parsed files run on the CPU backend give OCIO's FileTransform output on random HDR pixels (not just grid points)."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.formats.registry import load_cdl, load_lut
from tests import reference as ref
from tests.formats.files import random_rows, rows_text, write
from tests.formats.oracle import file_transform
from tests.ops.harness import assert_close, ocio_apply, ocio_cpu, run_color

# Absolute on outputs of about -0.5..2.5: float32 index maths moves results by ~1e-6 (see tests/ops).
ATOL = 1e-5
SHAPE = (24, 32, 4)


def run_ops(backend, ops, img: np.ndarray) -> np.ndarray:
    for op in ops:
        img = run_color(backend, img, op.name, op)
    return img


def lut_files(folder):
    """name -> (path, domain of the first op) for each layout whose op composition must match OCIO."""
    shaper = (
        "LUT_1D_SIZE 9\nLUT_1D_INPUT_RANGE -0.5 2.0\nLUT_3D_SIZE 5\nLUT_3D_INPUT_RANGE -0.25 1.75\n"
        + rows_text(random_rows(9, seed=1))
        + rows_text(random_rows(125, seed=2))
    )
    domain = "DOMAIN_MIN -0.5 0.0 0.25\nDOMAIN_MAX 1.5 3.0 1.25\nLUT_3D_SIZE 5\n" + rows_text(random_rows(125, seed=3))
    oned = "LUT_1D_SIZE 17\nDOMAIN_MIN -1 0 0\nDOMAIN_MAX 2 4 1\n" + rows_text(random_rows(17, seed=4))
    mesh = "0 100 300 600 1023\n" + rows_text(np.random.default_rng(5).integers(0, 4096, (125, 3)), "%d")
    spi1d = "Version 1\nFrom -0.5 1.5\nLength 6\nComponents 3\n{\n" + rows_text(random_rows(6, seed=6)) + "}\n"
    return {
        "cube_shaper": (write(folder / "shaper.cube", shaper), (-0.5, 2.0)),
        "cube_domain": (write(folder / "domain.cube", domain), (-0.5, 3.0)),
        "cube_1d_domain": (write(folder / "oned.cube", oned), (-1.0, 4.0)),
        "3dl_uneven_mesh": (write(folder / "mesh.3dl", mesh), (0.0, 1.0)),
        "spi1d": (write(folder / "range.spi1d", spi1d), (-0.5, 1.5)),
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return lut_files(tmp_path_factory.mktemp("e2e"))


@pytest.mark.parametrize("name", ["cube_shaper", "cube_domain", "cube_1d_domain", "3dl_uneven_mesh", "spi1d"])
def test_lut_file_through_cpu_backend_matches_ocio(cpu_backend, files, name):
    path, (lo, hi) = files[name]
    ops = load_lut(path)
    img = ref.lut_inputs(SHAPE, (lo,) * 3, (hi,) * 3, seed=len(name), nonfinite=False)
    want = ocio_apply(ocio_cpu(file_transform(path, OCIO.INTERP_BEST)), img)
    got = run_ops(cpu_backend, ops, img)
    assert_close(got[..., :3], want[..., :3], rtol=0.0, atol=ATOL, inputs=img, what=f"{name} vs OCIO")


@pytest.mark.parametrize("style, ocio_style", [("noclamp", OCIO.CDL_NO_CLAMP), ("asc", OCIO.CDL_ASC)])
def test_ccc_through_cpu_backend_matches_ocio(cpu_backend, tmp_path, style, ocio_style):
    text = (
        '<ColorCorrectionCollection xmlns="urn:ASC:CDL:v1.01">\n'
        '<ColorCorrection id="a"><SOPNode><Slope>2 2 2</Slope><Offset>0 0 0</Offset><Power>1 1 1</Power>'
        "</SOPNode></ColorCorrection>\n"
        '<ColorCorrection id="b"><SOPNode><Slope>1.1 0.9 1.3</Slope><Offset>-0.02 0.01 0.05</Offset>'
        "<Power>0.8 1.1 1.4</Power></SOPNode><SATNode><Saturation>0.7</Saturation></SATNode></ColorCorrection>\n"
        "</ColorCorrectionCollection>\n"
    )
    path = write(tmp_path / "grade.ccc", text)
    op = load_cdl(path, "b", style)
    t = OCIO.CDLTransform.CreateFromFile(str(path), "b")
    t.setStyle(ocio_style)
    img = ref.hdr_image(SHAPE, seed=7)
    want = ocio_apply(ocio_cpu(t), img)
    got = run_color(cpu_backend, img, "cdl", op)
    assert_close(got[..., :3], want[..., :3], rtol=2e-6, atol=1e-7, inputs=img, what=f"ccc {style}")
