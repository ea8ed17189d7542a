"""Pick the parser for a LUT or CDL file by its extension and read the file once."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from oxi_cli.errors import InputError, UsageError

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
    data = _read(path, "LUT")
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)(data, path, interp)


def load_cdl(path: str | Path, cc_id: str | None = None, style: str = "noclamp") -> Cdl:
    """Read an ASC CDL XML file (.cc / .ccc / .cdl); `cc_id` picks a correction by id or 0-based index."""
    path = Path(path)
    if path.suffix.lower() not in CDL_EXTENSIONS:
        raise InputError(
            f"{path}: unknown CDL extension {path.suffix or '(none)'!r}; supported: {', '.join(CDL_EXTENSIONS)}"
        )
    from oxi_cli.formats.cdl_xml import parse_cdl

    return parse_cdl(_read(path, "CDL"), path, cc_id, style)


def _read(path: Path, kind: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{kind} file not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{kind} path is a folder, not a file: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read {kind} file {path}: {exc.strerror or exc}") from None
