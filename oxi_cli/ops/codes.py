"""The colour program's op codes: one table, read by ops, the CPU kernels' `LONE` maps and the WGSL chain."""

from __future__ import annotations

# Row i is op code i. On the CPU each code is a key of its kernel module's `LONE` (backends/cpu/kernels/color.py
# gathers them); wgsl/color.wgsl has one function per code, `op_` and its name in lower case, which the GPU's chain
# calls by that name (a code without one does not compile; tests/backends/test_op_codes.py checks both sides).
CODE_NAMES = (
    "CDL_NOCLAMP",
    "CDL_ASC",
    "MATRIX_RGB",
    "MATRIX_RGBA",
    "LUT1D",
    "LUT3D_TETRAHEDRAL",
    "LUT3D_TRILINEAR",
    "LUT1D_HALF",
    "EXPONENT",
    "MONCURVE_FWD",
    "MONCURVE_REV",
    "LIN_TO_LOG",
    "LOG_TO_LIN",
    "RANGE",
    "EXPOSURE_CONTRAST",
    "ACES2_OUTPUT",
    "MATRIX_SCALE",
    "MATRIX_SCALE_RGBA",
    "UNPREMULT",
    "REPREMULT",
)
# The same codes as Python constants (Numba reads module globals as compile-time constants).
(
    CDL_NOCLAMP, CDL_ASC, MATRIX_RGB, MATRIX_RGBA, LUT1D, LUT3D_TETRAHEDRAL, LUT3D_TRILINEAR,
    LUT1D_HALF, EXPONENT, MONCURVE_FWD, MONCURVE_REV, LIN_TO_LOG, LOG_TO_LIN, RANGE, EXPOSURE_CONTRAST,
    ACES2_OUTPUT, MATRIX_SCALE, MATRIX_SCALE_RGBA, UNPREMULT, REPREMULT,
) = range(len(CODE_NAMES))
if [globals()[name] for name in CODE_NAMES] != list(range(len(CODE_NAMES))):  # pragma: no cover
    raise ImportError("ops/codes.py: the constants must follow CODE_NAMES")


def wgsl_entry(code: int) -> str:
    """The WGSL function in wgsl/color.wgsl that applies the op with this code to one pixel."""
    return f"op_{CODE_NAMES[code].lower()}"
