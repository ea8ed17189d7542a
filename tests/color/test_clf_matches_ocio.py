"""CLF and CTF files wherever a LUT file goes: every node kind and attribute combination (tests/color/clf_nodes.py)
read through OCIO, translated to oxi ops and run on both backends, against OCIO's CPU processor reading the same
file; what oxi has no kernel for runs in OCIO's CPU processor and must give OCIO's numbers too."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.formats.ocio_ops import fallback_note
from oxi_cli.formats.registry import load_lut
from oxi_cli.ops.ocio_cpu import OcioCpu
from tests.color.clf_nodes import all_cases, document, kind
from tests.color.oracle import ocio_reference, run_oxi
from tests.ops.harness import assert_close

CASES = all_cases()
# Relative to max(|value|, 1e-3), as docs/GUIDE.md states it. OCIO renders an exposure/contrast whose contrast is not 1
# with its SSE power approximation (about 2e-5 off powf, finite for +Inf): there 5e-5, on finite pixels.
# The ACES 2.0 output transform's display values: within 1e-4 (docs/GUIDE.md, tests/color/test_aces2_matches_ocio.py).
RTOL, POWER_EC_RTOL, SCALE = 1e-5, 5e-5, 1e-3
ACES2_BOUND = {"rtol": 0.0, "atol": 1e-4}


@pytest.fixture(scope="module")
def clf_image(hdr_image) -> np.ndarray:
    """hdr_image and rows a CLF node may treat specially: the top of the half range (65504 and the values that
    round to it or past it), inputs an inverse LUT maps up there, and code values of integer depths."""
    rng = np.random.default_rng(25)
    top = np.array([65504.0, -65504.0, 65519.0, 65520.0, 6e4, 1e5, -1e5, 32768.0, 0.99998, 0.9999, 0.999, 1.0,
                    1.5, -0.99998, 2.0**-24, -(2.0**-14)])
    extra = np.stack([np.stack([top, np.roll(top, 5), np.roll(top, 11)], -1),
                      rng.integers(0, 1024, (16, 3)) / 1023.0, rng.uniform(0.9, 1.0, (16, 3))])
    return np.concatenate([hdr_image, extra.astype(np.float32)])


@pytest.fixture(scope="module")
def clf_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clf")
    files = {}
    for name, case in CASES.items():
        path = folder / f"{name}.{'ctf' if case.ctf else 'clf'}"
        path.write_text(document(name, case))
        files[name] = path
    return files


def test_every_node_kind_and_attribute_matches_ocio(backend, clf_image, clf_files):
    failures = []
    for name, path in clf_files.items():
        case = CASES[name]
        ops = load_lut(path)
        if all(op.runs_natively() for op in ops) != case.native:
            failures.append(f"{name}: expected {'native ops' if case.native else 'an OCIO fallback'}, got {ops}")
        transform = OCIO.FileTransform(src=str(path), interpolation=OCIO.INTERP_TETRAHEDRAL)
        want = ocio_reference(OCIO.Config.CreateRaw().getProcessor(transform), clf_image)
        got, inputs = run_oxi(backend, ops, clf_image), clf_image
        bound, figure = {"rtol": RTOL, "scale": SCALE}, kind(name)
        if case.power_ec:
            finite = np.isfinite(clf_image).all(axis=-1)
            got, want, inputs, bound["rtol"] = got[finite], want[finite], None, POWER_EC_RTOL
            figure = "exposure_contrast with a power"
        if case.aces2:
            bound, figure = ACES2_BOUND, "ACES 2.0 output"
        try:
            assert_close(got, want, inputs=inputs, what=f"{path.name} on {backend.name}",
                         figure=f"{figure} on {backend.name}", **bound)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_fallback_keeps_every_lut_entry_of_the_file(clf_files):
    # OCIO's CTF writer rounds LUT entries (5 digits at 16f): the half-domain inverse LUT was 1.4e-2 off OCIO
    # at 6e4 before oxi wrote the fallback's tables itself.
    for name in ("inverse_lut1d_half_domain_16f_to_65504", "inverse_lut1d_12i", "lut1d_half_domain_hue_adjust",
                 "inverse_lut3d"):
        (fallback,) = [op for op in load_lut(clf_files[name]) if isinstance(op, OcioCpu)]
        ours = _lut_values(OCIO.FileTransform(src=str(clf_files[name])))
        path = clf_files[name].with_name(f"{name}_fallback.ctf")
        path.write_text(fallback.ctf)
        theirs = _lut_values(OCIO.FileTransform(src=str(path)))
        assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32)), name


def test_the_warning_names_what_ocio_runs(clf_files):
    labels = {"inverse_lut3d": "inverse Lut3D", "lut1d_hue_adjust": "Lut1D with hue adjust", "cdl_Rev": "inverse CDL",
              "inverse_lut1d_half_domain_hue_adjust": "inverse Lut1D with hue adjust",
              "exposure_contrast_dynamic": "dynamic ExposureContrast", "fixed_function_aces2_output_inverse":
              "inverse FixedFunction ACES_OUTPUT_TRANSFORM_20"}
    for name, label in labels.items():
        note = fallback_note(load_lut(clf_files[name]), name)
        assert note == f"{name}: no oxi kernel yet for {label}; running it with OpenColorIO's CPU processor"


def _lut_values(transform) -> np.ndarray:
    processor = OCIO.Config.CreateRaw().getProcessor(transform)
    group = processor.getOptimizedProcessor(OCIO.OPTIMIZATION_LOSSLESS).createGroupTransform()
    return np.concatenate([np.asarray(t.getData(), np.float32) for t in group if hasattr(t, "getData")])


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
