"""`oxi info`: what an image file holds, and per-channel statistics streamed in row bands (any size)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from oxi_cli.io.formats import named

BAND_BYTES = 64 << 20  # decoded float32 bytes per band of rows; bounds memory whatever the image size
# Header entries shown in their own fields rather than among the attributes.
_STRUCTURAL = {"channels", "compression", "dataWindow", "displayWindow", "tiles", "type", "pixelAspectRatio",
               "chunkCount", "oxi:extraParts"}
_MAX_TEXT = 200


def describe(path: str | Path) -> dict[str, Any]:
    """Everything but the pixels: size, channels and pixel types, codec, tiling, windows, attributes.

    The top-level fields describe the first part; an EXR also lists every part (the first included) in
    "parts", each with its index, name, view and the same fields.
    """
    from oxi_cli.io import read_spec
    from oxi_cli.io.movie import movie_container

    path = Path(path)
    if movie_container(path):
        from oxi_cli.io.movie import describe as describe_movie

        return describe_movie(path)
    spec = read_spec(path)
    info: dict[str, Any] = {"path": str(path), "format": spec.meta.format, "file_bytes": path.stat().st_size}
    info.update(_describe_part(spec))
    if named(spec.meta.format).parts:
        info["parts"] = [
            {"index": i, "name": part.meta.header.get("name"), "view": part.meta.header.get("view"),
             **_describe_part(part)}
            for i, part in enumerate(spec.all_parts())
        ]
    return info


def _describe_part(spec: Any) -> dict[str, Any]:
    meta = spec.meta
    header = meta.header
    info: dict[str, Any] = {
        "width": spec.width,
        "height": spec.height,
        "channels": [{"name": n, "type": meta.pixel_types[n]} for n in spec.channels],
        "compression": meta.compression,
    }
    if meta.levels != "one":  # a texture: oxi reads and writes its top level (--mip-level 0)
        info["levels"] = meta.levels
    fmt = named(meta.format)
    if fmt.can("describe"):
        info.update({key: _jsonable(value) for key, value in fmt.call("describe", spec).items()})
    attributes = {k: _jsonable(v) for k, v in sorted(header.items()) if k not in _STRUCTURAL}
    info["attributes"] = attributes
    info["colour"] = colour_attributes(attributes)
    return info


def colour_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """The colour-space attributes a file carries, chromaticities named when they match a known space."""
    from oxi_cli.colour_tags import COLOUR_KEYS, PRIMARIES, primaries_named

    found = {k: attributes[k] for k in COLOUR_KEYS if k in attributes}
    word = primaries_named(found.get("chromaticities"))
    if word is not None:
        found["primaries"] = PRIMARIES[word][0]
    return found


def _tiles(tiles: Any) -> dict[str, Any]:
    return {
        "width": int(tiles.xSize),
        "height": int(tiles.ySize),
        "levels": _jsonable(tiles.mode),
        "rounding": _jsonable(tiles.roundingMode),
    }


def _jsonable(v: Any) -> Any:
    """Header values (numpy arrays, OpenEXR enums, bytes, tuples) as plain JSON values."""
    if v is None or isinstance(v, (bool, int, str)):
        return _short(v) if isinstance(v, str) else v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, (bytes, bytearray)):
        text = bytes(v).decode("latin-1")
        return _short(text) if text.isprintable() else f"<{len(v)} bytes>"
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, np.generic):
        return _jsonable(v.item())
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if hasattr(v, "xSize") and hasattr(v, "ySize"):
        return _tiles(v)
    name = getattr(v, "name", None)
    if isinstance(name, str):  # pybind11 enums: Compression.ZIP_COMPRESSION -> "ZIP_COMPRESSION"
        return name
    return _short(str(v))


def _short(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else f"{text[:_MAX_TEXT]}... ({len(text)} characters)"


# --- statistics ------------------------------------------------------------------------------------


@dataclass
class ChannelStats:
    """Min, max and mean of the finite values; NaN and infinity counted apart."""

    count: int = 0
    finite: int = 0
    total: float = 0.0
    minimum: float = math.inf
    maximum: float = -math.inf
    nan: int = 0
    pos_inf: int = 0
    neg_inf: int = 0

    def add(self, values: np.ndarray) -> None:
        values = values.ravel()
        self.count += values.size
        nan = np.isnan(values)
        inf = np.isinf(values)
        self.nan += int(nan.sum())
        pos = int(np.count_nonzero(values[inf] > 0))
        self.pos_inf += pos
        self.neg_inf += int(inf.sum()) - pos
        finite = values[~(nan | inf)]
        if finite.size:
            self.finite += finite.size
            self.total += float(finite.sum(dtype=np.float64))
            self.minimum = min(self.minimum, float(finite.min()))
            self.maximum = max(self.maximum, float(finite.max()))

    def as_json(self) -> dict[str, Any]:
        has = self.finite > 0
        return {
            "min": self.minimum if has else None,
            "max": self.maximum if has else None,
            "mean": self.total / self.finite if has else None,
            "nan": self.nan,
            "pos_inf": self.pos_inf,
            "neg_inf": self.neg_inf,
            "count": self.count,
        }


def channel_stats(path: str | Path, band_rows: int | None = None) -> list[dict[str, dict[str, Any]]]:
    """Per-channel statistics of every part (one dict per part, in file order). A one-part EXR is read in bands
    of rows (about 64 MB of float32 each) through OpenEXR's band reads, so memory stays flat for any image size;
    multi-part EXRs and other formats are decoded whole. Integer channels are reported as oxi processes them
    (uint8/uint16 mapped to 0..1).
    """
    from oxi_cli.image import to_float32
    from oxi_cli.io import format_for, read_image, read_spec
    from oxi_cli.io.formats import named

    path = Path(path)
    spec = read_spec(path)  # the one-line errors for missing, truncated or unsupported files
    fmt = named(format_for(path))
    if fmt.reads_regions and not spec.parts and fmt.call("region_blocker", path) is None:
        stats = {name: ChannelStats() for name in spec.channels}
        _banded(fmt.call("region_reader", path), spec.channels, spec.meta.pixel_types, stats, band_rows)
        return [{name: s.as_json() for name, s in stats.items()}]
    found = []
    for part in read_image(path).all_parts():
        stats = {name: ChannelStats() for name in part.planes}
        for name, plane in part.planes.items():
            kind = part.meta.pixel_types[name]
            stats[name].add(plane.astype(np.float64) if kind == "uint32" else to_float32(plane, kind))
        found.append({name: s.as_json() for name, s in stats.items()})
    return found


def _banded(
    reader: Any, names: list[str], types: dict[str, str], stats: dict[str, ChannelStats], band_rows: int | None
) -> None:
    """Fold the file's rows into `stats` band by band, through the same checked reader as streamed processing."""
    from oxi_cli.image import to_float32

    with reader:
        rows = band_rows or max(1, BAND_BYTES // max(1, reader.width * 4 * len(names)))
        step = getattr(reader, "row_step", 1)
        if band_rows is None and step > 1:  # whole chunks or tile rows: each is decoded once
            rows = max(step, rows // step * step)
        for start in range(0, reader.height, rows):
            band = reader.read_rows(start, min(start + rows, reader.height))
            for name in names:
                # uint32 as float64: float32 would round above 2^24.
                kind = types[name]
                stats[name].add(band[name].astype(np.float64) if kind == "uint32" else to_float32(band[name], kind))
