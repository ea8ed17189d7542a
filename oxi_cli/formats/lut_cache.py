"""Big LUT files parsed once per user: their tables kept in oxi's cache, keyed by the file's bytes."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from oxi_cli.ops import ColorOp, Lut1d, Lut3d
from oxi_cli.trust import private_folder
from oxi_cli.user_cache import cache_dir, save_npz, sources_digest

# A 65³ .cube is 7.4 MB of text: parsing it took 0.32-0.36 s in a fresh process on a 2-core x86-64 machine (AVX-512)
# (0.11 s once numpy's big temporaries are paged in, which a process's first parse never finds), a tenth of an 8K lut3d
# job on a 16-core host with an H100 GPU, for every frame a farm renders with it; a cache hit takes 15 ms (reading and
# hashing the file included). A 33³ file (0.97 MB) parses in about 30 ms, as fast as a hit.
MIN_BYTES = 1 << 20
# Entries kept: a 65³ table is 3.3 MB. The least recently used go first once a new one is written.
MAX_ENTRIES = 64
OPT_OUT = "OXI_LUT_CACHE"
_KINDS = {cls.__name__: cls for cls in (Lut1d, Lut3d)}


def load_or_parse(data: bytes, parser: str, interp: str, parse: Callable[[], list[ColorOp]]) -> list[ColorOp]:
    """`parse()`'s ops for a LUT file's bytes, from the cache when it holds them; a parse that succeeds is
    cached if its ops are plain tables (Lut1d, Lut3d). A file that fails to parse is never cached, so its
    error is always the parser's own."""
    folder = cache_dir("luts")
    if len(data) < MIN_BYTES or refused() is not None:
        return parse()
    path = Path(folder, f"{_key(data, parser, interp)}.npz")
    ops = _load(path)
    if ops is None:
        ops = parse()
        if _save(path, ops):
            _prune(Path(folder))
    return ops


def refused() -> str | None:
    """Why the cache is not used (turned off, or a folder others could change: trust.py), or None."""
    if os.environ.get(OPT_OUT, "1").strip() == "0":
        return f"{OPT_OUT}=0 is set"
    return private_folder(cache_dir("luts"))


def _key(data: bytes, parser: str, interp: str) -> str:
    """The file's bytes, how it is read, and the code that reads it: an edit to a parser or to the ops
    (an upgrade) never serves a table parsed the old way."""
    digest = hashlib.sha1(f"{_sources_digest()}\0{parser}\0{interp}\0".encode())
    digest.update(data)
    return digest.hexdigest()[:32]


@functools.cache
def _sources_digest() -> str:
    here = Path(__file__).resolve().parent
    return sources_digest([*here.glob("*.py"), *(here.parent / "ops").glob("lut*.py"), here.parent / "ops" / "base.py"])


def _save(path: Path, ops: list[ColorOp]) -> bool:
    """Each op's class and fields: arrays as arrays, the rest as JSON; False for ops that are not plain tables."""
    if not ops or any(type(op).__name__ not in _KINDS for op in ops):
        return False
    arrays, described = {}, []
    for i, op in enumerate(ops):
        fields = {}
        for field in (f for f in dataclasses.fields(op) if f.init):
            value = getattr(op, field.name)
            if hasattr(value, "dtype"):
                arrays[f"{i}_{field.name}"] = value
            else:
                fields[field.name] = value
        described.append({"kind": type(op).__name__, "fields": fields})
    try:
        manifest = json.dumps(described)
    except TypeError:
        return False  # a field JSON cannot hold as it is: parse such files every time
    import numpy as np

    return save_npz(path, manifest=np.frombuffer(manifest.encode(), np.uint8), **arrays)


def _load(path: Path) -> list[ColorOp] | None:
    """The cached ops, or None when there are none or they cannot be rebuilt (each op checks its table again)."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as saved:
            described = json.loads(saved["manifest"].tobytes())
            ops = []
            for i, entry in enumerate(described):
                cls = _KINDS[entry["kind"]]
                fields = {k: tuple(v) if isinstance(v, list) else v for k, v in entry["fields"].items()}
                arrays = {f.name: saved[f"{i}_{f.name}"] for f in dataclasses.fields(cls) if f"{i}_{f.name}" in saved}
                ops.append(cls(**fields, **arrays))
    except Exception:  # noqa: BLE001 - a damaged or foreign entry is a cache miss, never an error
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: kept by _prune
    return ops


def _prune(folder: Path) -> None:
    """Keep the MAX_ENTRIES most recently used tables."""
    try:
        entries = sorted(folder.glob("*.npz"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[MAX_ENTRIES:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
