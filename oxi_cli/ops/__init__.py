"""Operation values: validated, immutable descriptions of what to do to pixels."""

import importlib

from oxi_cli.ops.base import AxisStep, ColorOp, Encoded, ImageOp

# Each op class is imported from its own module on first use, not here: the steps' declarations
# (oxi_cli.ops.step, each op's STEP) make `oxi --help`, and importing every op for them would load
# numpy and the ops' other needs before any help is printed (issue 9).
_HOMES = {
    "Aces2Output": "aces2",
    "Blur": "blur",
    "Cdl": "cdl",
    "Exponent": "exponent",
    "ExponentLinear": "exponent",
    "ExposureContrast": "exposure_contrast",
    "Log": "log",
    "Lut1d": "lut1d",
    "Lut3d": "lut3d",
    "Matrix": "matrix",
    "Place": "place",
    "Range": "range",
    "Repremult": "premult",
    "Resize": "resize",
    "Unpremult": "premult",
}

Op = ColorOp | ImageOp

__all__ = ["AxisStep", "ColorOp", "Encoded", "ImageOp", "Op", *_HOMES]


def __getattr__(name: str) -> type:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
