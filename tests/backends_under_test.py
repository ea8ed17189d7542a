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


# A backend on a simulator (the CUDA backend under NUMBA_ENABLE_CUDASIM=1, where no NVIDIA driver is) runs its
# kernels as Python threads, a pixel a thread: only tests whose id holds one of these run on it, small images that
# take every path of its code (each op code, each image op, halves both ways, chains in place and not, alpha, the
# program's source) in about a minute. On a real device every test runs.
SIMULATED = ("test_op_codes.py::", "test_image_ops.py::",
             "test_accelerator_parity.py::test_place_equals_the_host_bit_for_bit[cuda-pad_all_sides-4]",
             "test_accelerator_parity.py::test_cdl_into_separate_destination",
             "test_accelerator_parity.py::test_unpremultiplied_colour_chain",
             "test_accelerator_parity.py::test_blur_matches_the_host[cuda-sigma1.5-rgba-nan_inf]",
             "test_accelerator_parity.py::test_blur_matches_the_host[cuda-one_row-rgb-finite]",
             "test_accelerator_parity.py::test_resize_matches_the_host[cuda-lanczos3-down_noninteger-rgba]")


def opened(name: str, test: str = "") -> Any:
    """Backend `name` opened as `--backend NAME` opens it (its best device), the same object for every test of
    the run: one device, one pipeline cache. A simulated backend skips `test` (its node id) unless SIMULATED
    names it."""
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
    backend = _OPENED[name]
    if getattr(backend, "simulated", False) and test and not any(part in test for part in SIMULATED):
        pytest.skip(f"{kind.title} runs on a simulator here: tests/backends_under_test.SIMULATED runs on it")
    return backend
