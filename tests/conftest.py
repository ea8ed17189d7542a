"""Shared pytest fixtures: each backend opened once a run (each Numba kernel compiles once), and each in turn."""

from __future__ import annotations

import os

import pytest

from tests import backends_under_test as under_test

# The kernels' own tests must run the kernels: a cold one compiles and the job waits, rather than running on a
# stand-in while a background process compiles (tests/backends/test_cold_kernels.py tests that path, as users
# get it). Set before any oxi import; the `oxi` processes tests start inherit it.
os.environ.setdefault("OXI_WAIT_FOR_KERNELS", "1")
# The `oxi` commands tests run are their own processes unless a run asks for the service (`OXI_SERVER=on pytest`:
# the same tests through it). A service left running by someone's shell must not decide which.
os.environ.setdefault("OXI_SERVER", "off")
# Where no NVIDIA driver is (CI), the CUDA backend runs on Numba's CUDA simulator (kernels as Python on the CPU):
# the subset backends_under_test.SIMULATED names takes every path of its code on each run. Set before Numba loads.
if not __import__("oxi_cli.backends.cuda.devices", fromlist=["present"]).present():
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")


@pytest.fixture(scope="session")
def cpu_backend():
    # Imported here so tests that never touch a backend (op validation, parsers) don't pay for Numba.
    from oxi_cli.backends.cpu.backend import CpuBackend

    return CpuBackend()


# Parametrised by the registry when this file loads: registering a backend runs every test that takes one of
# these on it, with no test copied or naming it. The ids are the registry's names (`-k gpu`). Function-scoped, as
# the backends are opened once a run anyway (backends_under_test.opened): pytest regroups a session-scoped
# parameter's tests by backend across modules, which set up their module fixtures (LUT files, plates) again.
@pytest.fixture(params=under_test.backend_names())
def each_backend(request):
    """Each registered backend in turn: the host as `cpu_backend`, the others as `--backend NAME` opens them
    (skipped when one will not open, a failure under OXI_REQUIRE_GPU=1)."""
    from oxi_cli.backends import registry

    if request.param == registry.HOST:
        return request.getfixturevalue("cpu_backend")
    return under_test.opened(request.param, request.node.nodeid)


@pytest.fixture(params=under_test.accelerator_names())
def each_accelerator(request):
    """Each registered backend but the host, for the parity tests that hold it against the host (`cpu_backend`)."""
    return under_test.opened(request.param, request.node.nodeid)


@pytest.fixture(scope="session")
def oxi_wheel(tmp_path_factory):
    """The wheel of this tree, built once per run for the tests that install it (tests/installed.py)."""
    from tests.installed import build_wheel

    return build_wheel(tmp_path_factory.mktemp("wheel"))


def pytest_addoption(parser):
    parser.addoption("--error-figures", action="store_true", help="print the worst error each accuracy test saw")


def pytest_terminal_summary(terminalreporter, config):
    if not config.getoption("--error-figures"):
        return
    from tests.ops.harness import WORST

    terminalreporter.section("worst error per accuracy test (|Δ| relative to the check's scale, or absolute)")
    for test, (worst, kind) in sorted(WORST.items()):
        terminalreporter.write_line(f"{worst:10.3g} {kind:8s} {test}")
