"""The Python API, public as `oxi_cli`'s namespace (`import oxi_cli as oxi`; docs/API.md): the command's own pieces."""

from oxi_cli.api.arrays import apply, from_array, read, to_array, write
from oxi_cli.api.devices import Backend, open_backend, probe
from oxi_cli.api.files import FileResult, Progress, process
from oxi_cli.api.ops import Blur, Cdl, Chain, ColorSpace, Display, Lut3d, LutFile, Matrix, Op, Resize, load_recipe
from oxi_cli.errors import (
    BackendUnavailable,
    DamagedFileWarning,
    FormatError,
    GpuFailure,
    InputError,
    Interrupted,
    OpError,
    OxiError,
    ProcessingError,
    UsageError,
)
from oxi_cli.image import Image, ImageMeta

# The same names as oxi_cli.__all__ (tests/api/test_namespace.py): public; everything else in the package is private.
__all__ = [
    "Op", "Cdl", "Lut3d", "LutFile", "Matrix", "Resize", "Blur", "ColorSpace", "Display", "Chain", "load_recipe",
    "process", "FileResult", "Progress",
    "apply", "read", "write", "to_array", "from_array", "Image", "ImageMeta",
    "probe", "open_backend", "Backend",
    "OxiError", "UsageError", "InputError", "FormatError", "OpError", "ProcessingError", "GpuFailure",
    "BackendUnavailable", "Interrupted", "DamagedFileWarning",
]
