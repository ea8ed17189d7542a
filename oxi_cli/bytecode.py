"""Bytecode for the `oxi` command's imports where the installation keeps none: compiled once into oxi's cache."""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder
from typing import Any

from oxi_cli.trust import private_folder
from oxi_cli.user_cache import cache_dir

# Without bytecode every process compiles numpy and Numba from source. That happens wherever an installer wrote none and
# Python may not write it: uv installs none unless asked (--compile-bytecode), container images set
# PYTHONDONTWRITEBYTECODE, and a read-only site-packages keeps nothing. On a 16-core host with an H100 GPU (a uv-built
# environment without bytecode, PYTHONDONTWRITEBYTECODE=1) a 16x16 cdl took 0.81 s that way and 0.48 s with bytecode.
PROBES = ("numpy", "numba")
OPT_OUT = "OXI_BYTECODE_CACHE"
# What `use_own_cache` found lacking when it switched this process to oxi's cache (for `oxi probe`).
switched_for: tuple[str, ...] = ()


def missing(probes: tuple[str, ...] = PROBES) -> list[str]:
    """The probed packages with no bytecode beside their source and none that Python will write there."""
    return [name for name in probes if not _kept(name)]


def own_cache() -> str:
    return cache_dir("pycache")


def use_own_cache(probes: tuple[str, ...] = PROBES) -> str | None:
    """Point every later import at oxi's bytecode cache when `missing` finds any; returns that folder or None.

    A user's own PYTHONPYCACHEPREFIX wins, OXI_BYTECODE_CACHE=0 turns this off, and a folder that other users
    may write into is not used. Python checks cached bytecode against its source (mtime and size) as it does in
    any __pycache__, so an upgrade is recompiled.
    """
    global switched_for
    if sys.pycache_prefix is not None or not (lacking := missing(probes)) or refused() is not None:
        return None
    switched_for = tuple(lacking)
    sys.pycache_prefix = own_cache()
    # PYTHONDONTWRITEBYTECODE keeps .pyc files out of images and source trees; this folder is neither.
    sys.dont_write_bytecode = False
    return sys.pycache_prefix


def recheck() -> None:
    """In a long-lived process (a service worker, before each job): stop reading oxi's bytecode cache once
    nobody-else-may-write no longer holds for it; Python reads it at every later import."""
    if sys.pycache_prefix == own_cache() and refused() is not None:
        sys.pycache_prefix = None


def refused() -> str | None:
    """Why oxi's cache may not be used here, or None."""
    if os.environ.get(OPT_OUT, "1").strip() == "0":
        return f"{OPT_OUT}=0 is set"
    why = private_folder(own_cache())
    return f"{why}: oxi's bytecode cache is not used" if why else None


def _kept(name: str) -> bool:
    spec = PathFinder.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return True  # not installed, or not from source: nothing to compile
    folder, file = os.path.split(spec.origin)
    pycache = os.path.join(folder, "__pycache__")
    if os.path.exists(os.path.join(pycache, f"{file[:-3]}.{sys.implementation.cache_tag}.pyc")):
        return True
    writable = os.access(pycache if os.path.isdir(pycache) else folder, os.W_OK)
    return writable and not sys.dont_write_bytecode


def report() -> dict[str, Any]:
    """Where this process's bytecode comes from (the installation, oxi's cache, or the user's prefix), for
    `oxi probe`: one line to print and its parts."""
    prefix = sys.pycache_prefix
    if prefix is None:
        lacking = missing()
        source, line = "installation", "Python bytecode: the installation's"
        if lacking:
            line += (f"; here {_none_kept(lacking)}, so every oxi process compiles their source "
                     f"({refused() or 'not as the oxi command'}); `python -m compileall` on their "
                     "site-packages gives them bytecode")
    elif switched_for:
        lacking, source = list(switched_for), "oxi cache"
        line = f"Python bytecode: oxi's cache {prefix} (here {_none_kept(lacking)} beside the source)"
    else:
        lacking, source = [], "PYTHONPYCACHEPREFIX"
        line = f"Python bytecode: PYTHONPYCACHEPREFIX={prefix}"
    return {"source": source, "prefix": prefix, "installation_lacks": lacking, "line": line}


def _none_kept(names: list[str]) -> str:
    return f"{' and '.join(names)} {'keeps' if len(names) == 1 else 'keep'} no bytecode"
