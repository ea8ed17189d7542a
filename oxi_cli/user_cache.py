"""Where oxi keeps what it builds once per user: $XDG_CACHE_HOME/oxi (~/.cache/oxi)."""

from __future__ import annotations

import os


def cache_dir(*parts: str) -> str:
    """A folder (or file) under oxi's user cache; nothing is created here."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "oxi", *parts)
