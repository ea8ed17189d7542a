"""A backend added to the registry is run by the existing op, colour, planner and parity tests, none copied for it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from oxi_cli.backends import registry
from tests import backends_under_test as under_test

ROOT = Path(__file__).resolve().parents[2]
# The tests that run on every backend, or hold every accelerator against the host.
OVER_THE_REGISTRY = ["tests/ops", "tests/color", "tests/planner", "tests/backends/test_accelerator_parity.py",
                     "tests/backends/test_accelerator_cli.py", "tests/backends/test_op_codes.py",
                     "tests/backends/test_image_ops.py", "tests/api/test_apply.py", "tests/cli/test_unpremult.py"]
# What the third backend runs for real, to show the fixtures open it by its registration (cheap tests: the host's
# kernels under another name).
RUN_ON_THIRD = "third and (place or image_op or lut1d)"
# A registration made before the tests' conftest loads, as a backend of oxi's own would be; it records every test
# collected, with its fixtures, before -k picks the few that run.
PLUGIN = '''
import dataclasses
import os

import pytest

from oxi_cli.backends import registry


def open_third(device, threads):
    from oxi_cli.backends.cpu.backend import CpuBackend

    backend = CpuBackend(threads)
    backend.name = "third"
    return backend


registry.KINDS["third"] = dataclasses.replace(registry.KINDS[registry.HOST], name="third", label="Third",
                                              home="", opener="third_backend:open_third")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    with open(os.environ["THIRD_BACKEND_COLLECTED"], "w") as f:
        f.writelines(f"{item.nodeid}\\t{','.join(item.fixturenames)}\\n" for item in items)
'''


def test_the_backend_fixtures_are_the_registrys_kinds_in_its_order():
    assert under_test.backend_names() == list(registry.KINDS)
    assert under_test.accelerator_names() == [name for name in registry.KINDS if name != registry.HOST]


def test_a_third_registered_backend_gets_every_test_an_accelerator_gets_and_passes_them(tmp_path):
    collected = tmp_path / "collected.txt"
    (tmp_path / "third_backend.py").write_text(PLUGIN)
    path = os.pathsep.join(filter(None, [str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "THIRD_BACKEND_COLLECTED": str(collected)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "third_backend", "-p", "no:cacheprovider",
                          "-k", RUN_ON_THIRD, *OVER_THE_REGISTRY], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tests = dict(line.split("\t") for line in collected.read_text().splitlines())
    # None of these tests asks for a backend by a name of its own: the host's fixture, or the registry's.
    named = {i for i, fixtures in tests.items() if {"gpu_backend", "small_window_gpu"} & set(fixtures.split(","))}
    assert not named, f"tests naming the GPU instead of each_accelerator / each_backend: {sorted(named)[:5]}"
    # Today's accelerator (the GPU) shows in the ids of the tests it runs: the third must have the same, and any
    # other id of GPU (a "gpu_backend" parameter) is a test the third is missing.
    gpu = {i for i in tests if re.search(r"\[.*gpu", i)}
    third = {i for i in tests if re.search(r"[\[-]third[\]-]", i)}
    assert gpu, "no test runs over the registry's accelerators"
    assert {re.sub(r"(?<=[\[-])gpu(?=[\]-])", "third", i) for i in gpu} == third
    assert re.search(r"\b[1-9]\d* passed", run.stdout) and " skipped" not in run.stdout, run.stdout[-2000:]
