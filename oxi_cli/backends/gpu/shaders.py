"""Find the WGSL files, expand their includes and template lines, and compile each pipeline once."""

from __future__ import annotations

import functools
import importlib.resources
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_INCLUDE = re.compile(r'^\s*#include\s+"([\w.]+)"\s*$')
_VAR = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@functools.lru_cache(maxsize=1)
def wgsl_dir() -> Path:
    """The shader folder: oxi_cli/wgsl inside an installed wheel, else the checkout's top-level wgsl/
    (source tree and editable installs; setup.py maps one onto the other when building).
    """
    installed = importlib.resources.files("oxi_cli") / "wgsl"
    if installed.joinpath("common.wgsl").is_file():
        return Path(str(installed))
    return Path(__file__).resolve().parents[3] / "wgsl"


@functools.lru_cache(maxsize=64)
def load_wgsl(name: str) -> str:
    """The text of one shader file, as shipped."""
    path = wgsl_dir() / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"WGSL shader {name} is missing from {path.parent}; reinstall oxi") from None


def render(name: str, params: Mapping[str, Any]) -> str:
    """Expand `#include "x.wgsl"` (once each), `$$ if NAME` / `$$ else` / `$$ endif` lines and `{{NAME}}`.

    Every name used must be in `params`: a missing one is an error, never an empty string.
    """
    lines = _expand(name, set())
    out: list[str] = []
    stack: list[bool] = []  # whether each open `$$ if` branch is being kept
    for lineno, line in enumerate(lines, 1):
        words = line.split()
        if words[:1] == ["$$"]:
            keyword = words[1] if len(words) > 1 else ""
            if keyword == "if" and len(words) == 3:
                stack.append(bool(_param(params, words[2], name, lineno)))
            elif keyword == "else" and stack:
                stack[-1] = not stack[-1]
            elif keyword == "endif" and stack:
                stack.pop()
            else:
                raise ValueError(f"{name}: bad template line {lineno}: {line.strip()!r}")
            continue
        if all(stack):
            out.append(_VAR.sub(lambda m, n=lineno: str(_param(params, m.group(1), name, n)), line))
    if stack:
        raise ValueError(f"{name}: `$$ if` without `$$ endif`")
    return "\n".join(out) + "\n"


def _param(params: Mapping[str, Any], key: str, name: str, lineno: int) -> Any:
    if key not in params:
        raise KeyError(f"{name}: template value {key!r} (line {lineno}) not given")
    return params[key]


def _expand(name: str, seen: set[str]) -> list[str]:
    if name in seen:
        return []
    seen.add(name)
    lines: list[str] = []
    for line in load_wgsl(name).splitlines():
        m = _INCLUDE.match(line)
        lines.extend(_expand(m.group(1), seen) if m else [line])
    return lines


class PipelineCache:
    """Compute pipelines of one device, keyed by (shader name, specialisation), compiled on first use."""

    def __init__(self, device: Any) -> None:
        self._device = device
        self._pipelines: dict[tuple, Any] = {}
        self.compiled = 0

    def get(self, name: str, **spec: Any) -> Any:
        key = (name, tuple(sorted(spec.items())))
        pipeline = self._pipelines.get(key)
        if pipeline is None:
            pipeline = self._pipelines[key] = self._compile(name, spec)
            self.compiled += 1
        return pipeline

    def _compile(self, name: str, spec: Mapping[str, Any]) -> Any:
        code = render(name, spec)
        try:
            module = self._device.create_shader_module(label=name, code=code)
            return self._device.create_compute_pipeline(
                label=f"{name} {sorted(spec.items())}",
                layout="auto",
                compute={"module": module, "entry_point": "main"},
            )
        except Exception:
            if os.environ.get("OXI_SHOW_WGSL"):
                numbered = "\n".join(f"{i:4d}  {text}" for i, text in enumerate(code.splitlines(), 1))
                print(f"--- {name} {dict(spec)} ---\n{numbered}", file=sys.stderr)
            raise
