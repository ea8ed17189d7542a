"""Every colour space and display/view of OCIO's built-in CG and studio configs, run by oxi on both backends,
against OpenColorIO's own CPU processor (LOSSLESS) on HDR data with negatives, NaN and +-Inf."""

from __future__ import annotations

from typing import Any

import PyOpenColorIO as OCIO
import pytest

from oxi_cli.formats.ocio_ops import ops_from_processor
from tests.color.oracle import ocio_reference, run_oxi
from tests.ops.harness import assert_close

CONFIGS = ("ocio://cg-config-latest", "ocio://studio-config-latest")
REFERENCE = "ACEScg"
# Analytic conversions: |err| <= 1e-5 * max(|value|, 1e-3). The floor: decoding a log curve subtracts the
# linear offset from exp2(...), so outputs near 0 carry the rounding of operands of magnitude ~1e-3 and up.
RTOL, FLOOR = 1e-5, 1e-3
# Display/view outputs are display-referred (0..1 code values, or nits/100 before PQ): absolute.
VIEW_ATOL = 1e-4
# Inverse views give scene-linear values back through the inverse tone scale, whose slope multiplies any
# difference in its input (the GPU's own exp2/log2 differ from libm's in the last bits): relative.
INVERSE_RTOL = 1e-3


def _spaces(config: Any) -> list[str]:
    return [cs.getName() for cs in config.getColorSpaces(OCIO.SEARCH_REFERENCE_SPACE_ALL, OCIO.COLORSPACE_ALL)]


def _check_all(backend: Any, img: Any, cases: list[tuple[str, Any, dict]]) -> None:
    """Run every case, then fail once listing every transform that missed (not just the first)."""
    failures = []
    for label, processor, tolerance in cases:
        want = ocio_reference(processor, img)
        got = run_oxi(backend, ops_from_processor(processor), img)
        try:
            assert_close(got, want, inputs=img, what=f"{label} on {backend.name}", figure=label, **tolerance)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, f"{len(failures)} of {len(cases)} transforms differ from OCIO:\n" + "\n".join(failures)


@pytest.mark.parametrize("uri", CONFIGS)
def test_every_colour_space_converts_to_and_from_scene_linear_as_ocio(backend, hdr_image, uri):
    """A display-referred space is reached through its display's view transform (ACES 2.0 for the HDR ones): its
    code values also get the display/view test's absolute bound (XYZ display values are not bounded: the
    analytic relative one stays), and its way back the inverse view's."""
    config = OCIO.Config.CreateFromFile(uri)
    analytic = {"rtol": RTOL, "scale": FLOOR}
    cases = []
    for name in _spaces(config):
        display = config.getColorSpace(name).getReferenceSpaceType() == OCIO.REFERENCE_SPACE_DISPLAY
        to, back = ({**analytic, "atol": VIEW_ATOL}, {"rtol": INVERSE_RTOL, "scale": FLOOR}) if display else (
            analytic, analytic)
        cases.append((f"{REFERENCE} -> {name}", config.getProcessor(REFERENCE, name), to))
        cases.append((f"{name} -> {REFERENCE}", config.getProcessor(name, REFERENCE), back))
    _check_all(backend, hdr_image, cases)


@pytest.mark.parametrize("uri", CONFIGS)
def test_every_display_view_renders_and_inverts_as_ocio(backend, hdr_image, uri):
    config = OCIO.Config.CreateFromFile(uri)
    cases = []
    for display in config.getDisplays():
        for view in config.getViews(display):
            dvt = OCIO.DisplayViewTransform(src=REFERENCE, display=display, view=view)
            cases.append((f"{display} / {view}", config.getProcessor(dvt), {"rtol": 0.0, "atol": VIEW_ATOL}))
            dvt.setDirection(OCIO.TRANSFORM_DIR_INVERSE)
            inverse = {"rtol": INVERSE_RTOL, "scale": FLOOR}
            cases.append((f"{display} / {view} inverse", config.getProcessor(dvt), inverse))
    _check_all(backend, hdr_image, cases)
