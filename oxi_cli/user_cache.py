"""Where oxi keeps what it builds once per user: $XDG_CACHE_HOME/oxi (~/.cache/oxi)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from oxi_cli.trust import private_folder


def cache_dir(*parts: str) -> str:
    """A folder (or file) under oxi's user cache; nothing is created here."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "oxi", *parts)


def sources_digest(paths: Iterable[Path]) -> str:
    """A digest of the source files something cached was built from (their names and bytes): a cache entry
    keyed by it is never read back by code that would build it differently (an edit, an upgrade)."""
    digest = hashlib.sha1()
    for path in sorted(paths):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def private(folder: str) -> bool:
    """The folder exists, or is made, as one only this user or root can change, every folder above it included
    (trust.py): what oxi reads back from its cache runs or decides pixels as this user, so a folder others may
    write into, or reach through one (a shared XDG_CACHE_HOME), is not used."""
    return private_folder(folder) is None


def save_npz(path: Path, **arrays: Any) -> bool:
    """Write arrays whole or not at all (a temporary file renamed into place); False where that cannot be done
    (a read-only home, a full disk): a cache then simply stays cold, with no partial file left behind."""
    import numpy as np

    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False) as f:
            tmp = f.name
            np.savez(f, **arrays)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
