"""Names written "module:attribute", imported when first asked for: a registry lists what it holds without
loading it (`oxi --help` imports no codec, Numba or wgpu)."""

from __future__ import annotations

import importlib
from typing import Any


def load(target: str, package: str = "") -> Any:
    """The attribute `target` names; a module named without a dot is `package`'s when one is given."""
    module, _, name = target.partition(":")
    if package and "." not in module:
        module = f"{package}.{module}"
    return getattr(importlib.import_module(module), name)
