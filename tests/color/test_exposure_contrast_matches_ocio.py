"""Exposure/contrast (every style, both directions) on both backends against OCIO's CPU processor."""

from __future__ import annotations

import numpy as np
import PyOpenColorIO as OCIO

from oxi_cli.formats.ocio_ops import ops_from_processor
from tests.color.oracle import ocio_reference, run_oxi
from tests.ops.harness import assert_close

STYLES = {"linear": OCIO.EXPOSURE_CONTRAST_LINEAR, "video": OCIO.EXPOSURE_CONTRAST_VIDEO,
          "log": OCIO.EXPOSURE_CONTRAST_LOGARITHMIC}
# OCIO's x86 build renders a contrast other than 1 with its SSE power approximation even at LOSSLESS
# (ExposureContrastOpCPU.cpp): about 1.6e-5 relative off powf, and finite values (~1e34) for +Inf inputs.
# oxi computes the exact power, so there the check is 5e-5 on pixels without Inf or NaN.
RTOL = {True: 5e-5, False: 1e-5}


def test_exposure_contrast_matches_ocio(backend, hdr_image):
    failures = []
    for style, ocio_style in STYLES.items():
        for contrast, gamma in ((1.0, 1.0), (1.3, 1.1)):
            for inverse in (False, True):
                t = OCIO.ExposureContrastTransform(style=ocio_style, exposure=0.7, contrast=contrast, gamma=gamma,
                                                   pivot=0.2, direction=OCIO.TRANSFORM_DIR_INVERSE if inverse
                                                   else OCIO.TRANSFORM_DIR_FORWARD)
                processor = OCIO.Config.CreateRaw().getProcessor(t)
                ops = ops_from_processor(processor)
                assert all(op.runs_natively() for op in ops)
                label = f"{style} contrast {contrast * gamma:g}{' inverse' if inverse else ''}"
                powered = style != "log" and contrast * gamma != 1.0
                got, want = run_oxi(backend, ops, hdr_image), ocio_reference(processor, hdr_image)
                if powered:  # OCIO's approximate power is undefined for Inf: compare finite pixels only
                    finite = np.isfinite(hdr_image).all(axis=-1)
                    got, want = got[finite], want[finite]
                try:
                    assert_close(got, want, rtol=RTOL[powered], scale=1e-3, what=label, figure=label)
                except AssertionError as e:
                    failures.append(str(e))
    assert not failures, "\n".join(failures)
