"""CLF files wherever a LUT file goes: each node kind read through OCIO, translated to native oxi ops and run
on both backends, against OCIO's CPU processor reading the same file."""

from __future__ import annotations

from pathlib import Path

import PyOpenColorIO as OCIO
import pytest

from oxi_cli.formats.registry import load_lut
from tests.color.oracle import ocio_reference, run_oxi
from tests.ops.harness import assert_close

NODES = {
    "matrix": """<Matrix inBitDepth="32f" outBitDepth="32f"><Array dim="3 4">
        1.1 0.05 -0.02 0.01  0.03 0.95 0.02 -0.02  -0.01 0.04 1.05 0.005</Array></Matrix>""",
    "range": """<Range inBitDepth="32f" outBitDepth="32f"><minInValue>-0.1</minInValue><maxInValue>8</maxInValue>
        <minOutValue>0</minOutValue><maxOutValue>1</maxOutValue></Range>""",
    "range_min_only": """<Range inBitDepth="32f" outBitDepth="32f"><minInValue>0.01</minInValue>
        <minOutValue>0.01</minOutValue></Range>""",
    "log_camera": """<Log inBitDepth="32f" outBitDepth="32f" style="cameraLinToLog"><LogParams base="2"
        linSideSlope="1.1" linSideOffset="0.01" logSideSlope="0.07" logSideOffset="0.6" linSideBreak="0.005"/></Log>""",
    "log_affine_inverse": """<Log inBitDepth="32f" outBitDepth="32f" style="logToLin"><LogParams base="10"
        linSideSlope="0.9" linSideOffset="0.02" logSideSlope="0.25" logSideOffset="0.5"/></Log>""",
    "log10": """<Log inBitDepth="32f" outBitDepth="32f" style="log10"/>""",
    "exponent_moncurve": """<Exponent inBitDepth="32f" outBitDepth="32f" style="monCurveFwd">
        <ExponentParams exponent="2.2" offset="0.05"/></Exponent>""",
    "exponent_moncurve_mirror_rev": """<Exponent inBitDepth="32f" outBitDepth="32f" style="monCurveMirrorRev">
        <ExponentParams exponent="2.4" offset="0.055"/></Exponent>""",
    "exponent_basic": """<Exponent inBitDepth="32f" outBitDepth="32f" style="basicFwd">
        <ExponentParams exponent="2.6"/></Exponent>""",
    "exponent_mirror_rev": """<Exponent inBitDepth="32f" outBitDepth="32f" style="basicMirrorRev">
        <ExponentParams exponent="1.8"/></Exponent>""",
    "exponent_pass_thru": """<Exponent inBitDepth="32f" outBitDepth="32f" style="basicPassThruFwd">
        <ExponentParams exponent="0.45"/></Exponent>""",
    "lut1d": """<LUT1D inBitDepth="32f" outBitDepth="32f"><Array dim="5 3">
        0 0 0  0.2 0.25 0.3  0.45 0.5 0.5  0.7 0.75 0.72  1 1 1</Array></LUT1D>""",
    "lut3d": """<LUT3D inBitDepth="32f" outBitDepth="32f" interpolation="tetrahedral"><Array dim="2 2 2 3">
        0 0 0  0 0 1.1  0 0.9 0  0 1 1  1.05 0 0  1 0 1  1 1 0  1 0.95 1</Array></LUT3D>""",
    "asc_cdl": """<ASC_CDL inBitDepth="32f" outBitDepth="32f" style="Fwd"><SOPNode><Slope>1.1 1.0 0.9</Slope>
        <Offset>0.01 0.0 -0.01</Offset><Power>1.2 1.0 0.8</Power></SOPNode><SatNode><Saturation>0.9</Saturation>
        </SatNode></ASC_CDL>""",
}
NODES["all_nodes"] = "\n".join(NODES.values())


def write_clf(path: Path, nodes: str) -> Path:
    path.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<ProcessList compCLFversion="3" id="{path.stem}">\n'
                    f"{nodes}\n</ProcessList>\n")
    return path


@pytest.fixture(scope="module")
def clf_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clf")
    return {name: write_clf(folder / f"{name}.clf", nodes) for name, nodes in NODES.items()}


def test_clf_nodes_run_natively_and_match_ocio(backend, hdr_image, clf_files):
    failures = []
    for name, path in clf_files.items():
        ops = load_lut(path)
        assert all(op.runs_natively() for op in ops), f"{name}: {ops}"
        transform = OCIO.FileTransform(src=str(path), interpolation=OCIO.INTERP_TETRAHEDRAL)
        want = ocio_reference(OCIO.Config.CreateRaw().getProcessor(transform), hdr_image)
        try:
            assert_close(run_oxi(backend, ops, hdr_image), want, rtol=1e-5, scale=1e-3, inputs=hdr_image,
                         what=f"{name}.clf on {backend.name}", figure=f"{name}.clf")
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("direction", ["forward", "inverse"])
def test_ctf_with_an_aces2_output_transform_runs_as_ocio(cpu_backend, hdr_image, tmp_path, direction):
    # The forward ACES 2.0 output transform has a native kernel; its inverse (no kernel yet) still works:
    # OCIO's CPU processor runs it.
    config = OCIO.Config.CreateFromFile("ocio://studio-config-latest")
    dvt = OCIO.DisplayViewTransform(src="ACEScg", display="sRGB - Display", view="ACES 2.0 - SDR 100 nits (Rec.709)")
    if direction == "inverse":
        dvt.setDirection(OCIO.TRANSFORM_DIR_INVERSE)
    processor = config.getProcessor(dvt)
    path = tmp_path / f"aces2_{direction}.ctf"
    path.write_text(processor.createGroupTransform().write("Color Transform Format", config))
    ops = load_lut(path)
    assert all(op.runs_natively() for op in ops) == (direction == "forward")
    want = ocio_reference(OCIO.Config.CreateRaw().getProcessor(OCIO.FileTransform(src=str(path))), hdr_image)
    tolerance = {"rtol": 0.0, "atol": 1e-4} if direction == "forward" else {"rtol": 1e-3, "scale": 1e-3}
    assert_close(run_oxi(cpu_backend, ops, hdr_image), want, inputs=hdr_image, what=path.name, **tolerance)
