"""Transforms oxi has no kernel for yet, run by OpenColorIO's own CPU processor in bands on every core."""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded

# Pixels per band: large enough that OCIO's per-call set-up vanishes, small enough that every core gets
# several bands and the interleaved copy stays in cache.
BAND_PIXELS = 1 << 16


class OcioCpu(ColorOp):
    """OCIO transforms kept as a CTF document: text, so the op pickles and every process rebuilds the same
    processor. Not a dataclass: reports show the transform types it covers, not the document."""

    name: ClassVar[str] = "ocio"

    def __init__(self, ctf: str, covers: Sequence[str] = ()) -> None:
        if "<ProcessList" not in ctf:
            raise OpError("the OCIO fallback needs a CTF document (a ProcessList)")
        self.ctf = ctf
        self.covers = tuple(covers)

    def __reduce__(self) -> tuple[Any, ...]:
        return OcioCpu, (self.ctf, self.covers)

    def __repr__(self) -> str:
        return f"OcioCpu({', '.join(self.covers)})"

    def runs_natively(self) -> bool:
        return False

    def encode(self, has_alpha: bool) -> Encoded:
        raise OpError(f"no oxi kernel runs {', '.join(self.covers)}; the executor applies it on the host")

    def apply_on_host(self, rgb: Sequence[np.ndarray]) -> None:
        """OCIO's applyRGB releases the GIL: bands of interleaved pixels run on every core at once."""
        processor = _processor(self.ctf)
        flat = [plane.reshape(-1) for plane in rgb]
        total = flat[0].shape[0]

        def band(start: int) -> None:
            stop = min(start + BAND_PIXELS, total)
            px = np.empty((stop - start, 3), np.float32)
            for c in range(3):
                px[:, c] = flat[c][start:stop]
            processor.applyRGB(px)
            for c in range(3):
                flat[c][start:stop] = px[:, c]

        with ThreadPoolExecutor(_cores()) as pool:
            list(pool.map(band, range(0, total, BAND_PIXELS)))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


@functools.lru_cache(maxsize=32)
def _processor(ctf: str) -> Any:
    """The CPU processor of a CTF document; OCIO reads transforms from files only, so the text goes to a
    file named by its digest (OCIO caches files by path: equal text, equal file)."""
    import PyOpenColorIO as OCIO

    digest = hashlib.sha1(ctf.encode()).hexdigest()
    path = Path(tempfile.gettempdir()) / f"oxi-{os.getuid() if hasattr(os, 'getuid') else 0}-{digest}.ctf"
    if not path.is_file() or path.read_text(encoding="utf-8") != ctf:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(ctf, encoding="utf-8")
        os.replace(tmp, path)
    transform = OCIO.FileTransform(src=str(path))
    return OCIO.Config.CreateRaw().getProcessor(transform).getOptimizedCPUProcessor(OCIO.OPTIMIZATION_LOSSLESS)
