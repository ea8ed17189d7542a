"""TIFF read by bands of rows: the strips that cover a band are read and decoded (tifffile's codecs), no others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from oxi_cli.errors import ProcessingError
from oxi_cli.io.common import ImageSpec
from oxi_cli.io.library_log import held_library_log
from oxi_cli.io.raster import _corrupt, _open_tiff, _tiff_detail, _tiff_page, read_tiff_spec


def region_blocker(path: Path) -> str | None:
    """Why this TIFF is read whole (None when it can be read by bands): bands take strips of whole pixels, from a
    file tifffile reads without complaint (a damaged one goes whole, where its complaints become one warning)."""
    import tifffile

    with held_library_log() as held, _open_tiff(path) as tif:
        page = _tiff_page(tif, path)
        _ = page.tags, page.jpegtables, page.rowsperstrip  # tifffile parses lazily: have it complain now
        if held:
            return "a TIFF its library reports damaged is read whole"
        if page.is_tiled:
            return "a tiled TIFF is read whole"
        if page.samplesperpixel > 1 and int(page.planarconfig) == tifffile.PLANARCONFIG.SEPARATE:
            return "a TIFF with its samples in separate planes is read whole"
    return None


class TiffRegionReader:
    """Bands of rows of a stripped TIFF's first page: each band decodes the strips it covers."""

    fresh = True  # every band is newly decoded: the executor may compute in it

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.spec: ImageSpec = read_tiff_spec(self.path)
        self.width, self.height = self.spec.width, self.spec.height
        self._tif = _open_tiff(self.path)
        self._page = _tiff_page(self._tif, self.path)
        self.row_step = max(1, min(int(self._page.rowsperstrip or self.height), self.height))  # whole strips

    def _strip(self, index: int) -> np.ndarray:
        """Strip `index` decoded, (rows, width, samples)."""
        page, handle = self._page, self._tif.filehandle
        with held_library_log() as held:  # tifffile's complaints, kept from the terminal
            try:
                handle.seek(page.dataoffsets[index])
                data = handle.read(page.databytecounts[index])
                segment, _, shape = page.decode(data, index, jpegtables=page.jpegtables)
            except MemoryError:
                raise
            except Exception as e:
                detail = _tiff_detail(e) if not isinstance(e, OSError) else e
                raise _corrupt(self.path, "TIFF", f"strip {index}: {detail}") from None
        if segment is None or held:
            raise _corrupt(self.path, "TIFF", f"strip {index}: {held[0] if held else 'no data'}")
        return np.asarray(segment).reshape(shape[1], self.width, -1)

    def read_rows(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Rows [start, stop) of every channel, each (stop - start, width); float64 narrows to float32."""
        if not 0 <= start < stop <= self.height:
            raise ProcessingError(f"rows {start}..{stop} lie outside {self.path}'s {self.height} rows")
        first, last = start // self.row_step, (stop - 1) // self.row_step
        strips = [self._strip(i) for i in range(first, last + 1)]
        pixels = np.concatenate(strips) if len(strips) > 1 else strips[0]
        pixels = pixels[start - first * self.row_step : stop - first * self.row_step]
        if pixels.dtype == np.float64:
            pixels = pixels.astype(np.float32)
        return {name: np.ascontiguousarray(pixels[..., i]) for i, name in enumerate(self.spec.channels)}

    def close(self) -> None:
        self._tif.close()

    def __enter__(self) -> TiffRegionReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def region_reader(path: Path) -> TiffRegionReader:
    """io/formats.py's "region_reader" for TIFF."""
    return TiffRegionReader(path)
