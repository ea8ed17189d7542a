"""Shared pytest fixtures: one CPU backend per session, so each Numba kernel compiles once per run."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def cpu_backend():
    # Imported here so tests that never touch a backend (op validation, parsers) don't pay for Numba.
    from oxi_cli.backends.cpu.backend import CpuBackend

    return CpuBackend()
