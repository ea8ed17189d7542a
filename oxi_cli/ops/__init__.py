"""Operation values: validated, immutable descriptions of what to do to pixels."""

from oxi_cli.ops.aces2 import Aces2Output
from oxi_cli.ops.base import AxisStep, ColorOp, Encoded, ImageOp
from oxi_cli.ops.blur import Blur
from oxi_cli.ops.cdl import Cdl
from oxi_cli.ops.exponent import Exponent, ExponentLinear
from oxi_cli.ops.exposure_contrast import ExposureContrast
from oxi_cli.ops.log import Log
from oxi_cli.ops.lut1d import Lut1d
from oxi_cli.ops.lut3d import Lut3d
from oxi_cli.ops.matrix import Matrix
from oxi_cli.ops.place import Place
from oxi_cli.ops.range import Range
from oxi_cli.ops.resize import Resize

Op = ColorOp | ImageOp

__all__ = [
    "Aces2Output", "AxisStep", "Blur", "Cdl", "ColorOp", "Encoded", "Exponent", "ExponentLinear", "ExposureContrast",
    "ImageOp", "Log", "Lut1d", "Lut3d", "Matrix", "Op", "Place", "Range", "Resize",
]
