"""Pick the parser for a LUT or CDL file by its extension and read the file once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from oxi_cli.errors import InputError, UsageError
from oxi_cli.files import MAX_CDL_BYTES, MAX_LUT_BYTES
from oxi_cli.lazy import load

if TYPE_CHECKING:
    from oxi_cli.ops import Cdl, ColorOp

# Extension -> "module:function"; modules load on first use so `oxi --help` never imports Numba.
LUT_PARSERS = {
    ".cube": "oxi_cli.formats.cube:parse_cube",
    ".3dl": "oxi_cli.formats.threedl:parse_3dl",
    ".spi3d": "oxi_cli.formats.spi:parse_spi3d",
    ".spi1d": "oxi_cli.formats.spi:parse_spi1d",
    ".clf": "oxi_cli.formats.ocio_ops:parse_transform_file",
    ".ctf": "oxi_cli.formats.ocio_ops:parse_transform_file",
}
CDL_EXTENSIONS = (".cc", ".ccc", ".cdl")
INTERPOLATIONS = ("tetrahedral", "trilinear")


def load_lut(path: str | Path, interp: str = "tetrahedral") -> list[ColorOp]:
    """Read a .cube / .3dl / .spi3d / .spi1d / .clf / .ctf file into the ops it means, in order (shaper first)."""
    if interp not in INTERPOLATIONS:
        raise UsageError(f"--interp must be one of {', '.join(INTERPOLATIONS)}, got {interp!r}")
    path = Path(path)
    target = LUT_PARSERS.get(path.suffix.lower())
    if target is None:
        raise InputError(
            f"{path}: unknown LUT extension {path.suffix or '(none)'!r}; supported: {', '.join(LUT_PARSERS)}"
        )
    data = _read(path, "LUT", MAX_LUT_BYTES)
    from oxi_cli.formats.lut_cache import load_or_parse

    parser = load(target)
    return load_or_parse(data, target, interp, lambda: parser(data, path, interp))


def load_cdl(
    path: str | Path, cc_id: str | None = None, style: str = "noclamp", id_option: str | None = None
) -> Cdl:
    """Read an ASC CDL XML file (.cc / .ccc / .cdl); `cc_id` picks a correction by id or 0-based index, and
    with `id_option` a file of several corrections needs one (cdl_xml.parse_cdl)."""
    path = Path(path)
    if path.suffix.lower() not in CDL_EXTENSIONS:
        raise InputError(
            f"{path}: unknown CDL extension {path.suffix or '(none)'!r}; supported: {', '.join(CDL_EXTENSIONS)}"
        )
    from oxi_cli.formats.cdl_xml import parse_cdl

    return parse_cdl(_read(path, "CDL", MAX_CDL_BYTES), path, cc_id, style, id_option)


def _read(path: Path, kind: str, max_bytes: int) -> bytes:
    from oxi_cli.files import read_side_file

    return read_side_file(path, kind, max_bytes, text=True)
