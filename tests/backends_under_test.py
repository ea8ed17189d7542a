"""The backends tests run on: every one the registry (oxi_cli/backends/registry.py) holds, each opened once a run."""

from __future__ import annotations

import os
from typing import Any, NoReturn

import pytest

# A kind that would not open, with its error: asked again, it skips (or fails) at once instead of retrying.
_OPENED: dict[str, Any] = {}
_REFUSED: dict[str, Exception] = {}


def every_backend_required() -> bool:
    """OXI_REQUIRE_GPU=1 (set by .ci/run): a backend that will not open fails its tests instead of skipping them,
    so CI proves every registered backend's path, never silently the host's alone."""
    return os.environ.get("OXI_REQUIRE_GPU", "") not in ("", "0")


def backend_names() -> list[str]:
    """Every registered backend, in the registry's order: a new registration is tested without a test naming it."""
    # Imported here, not at the top: the root conftest sets oxi's environment before any oxi import.
    from oxi_cli.backends import registry

    return list(registry.KINDS)


def accelerator_names() -> list[str]:
    """The registered backends but the host: those whose results the parity tests hold against the host's."""
    from oxi_cli.backends import registry

    return [name for name in registry.KINDS if name != registry.HOST]


def unavailable(label: str, error: BaseException) -> NoReturn:
    """Skip the test for want of backend `label` (GPU, ...), or fail it under OXI_REQUIRE_GPU=1."""
    message = f"no {label} backend: {error}"
    if every_backend_required():
        pytest.fail(f"{message} (OXI_REQUIRE_GPU=1: CI must run the tests of every backend)", pytrace=False)
    pytest.skip(message)


def opened(name: str) -> Any:
    """Backend `name` opened as `--backend NAME` opens it (its best device), the same object for every test of
    the run: one device, one pipeline cache."""
    from oxi_cli.backends import registry
    from oxi_cli.errors import BackendUnavailable

    kind = registry.kind(name)
    if name not in _OPENED and name not in _REFUSED:
        try:
            _OPENED[name] = kind.open(None, None)
        except BackendUnavailable as exc:  # anything else is a bug the test must show, not a missing device
            _REFUSED[name] = exc
    if name in _REFUSED:
        unavailable(kind.label, _REFUSED[name])
    return _OPENED[name]
