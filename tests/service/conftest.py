"""The service tests' own service (a runtime folder per module) and inputs, shared by tests/service/."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from oxi_cli.service import control
from tests.cli.conftest import OXI, hdr_rgba, write_exr

OXI_CMD = [OXI] if OXI else [sys.executable, "-m", "oxi_cli"]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory):
    """A runtime folder of this module's own, so its service is this module's; stopped at the end."""
    run = tmp_path_factory.mktemp("runtime")
    run.chmod(0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "OXI_BACKEND": "cpu", "COLUMNS": "200"}
    # Running before the first test, so a test that reads its status first works alone too (pytest -k).
    subprocess.run([*OXI_CMD, "server", "start"], env=env, capture_output=True, timeout=120, check=True)
    yield env
    subprocess.run([*OXI_CMD, "server", "stop"], env=env, capture_output=True, timeout=60)


def oxi(env: dict, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*OXI_CMD, *args], env=env, capture_output=True, timeout=300, **kw)


def status(env: dict) -> dict:
    """`oxi server status --json` as this test process can ask it, without a process of its own per poll; for a
    service that must be running (a test that checks it is not reads control.status itself)."""
    found = control.status(env)
    assert found["running"], found  # why not: no socket, or one that gave no status in time ("unanswered")
    return found


def wait_for(condition, what: str, seconds: float = 120.0):
    """The first true value of condition(), polled every 5 ms (a state to reach, never a sleep)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def plate(tmp_path: Path) -> Path:
    return write_exr(tmp_path / "plate.exr", hdr_rgba(37, 53), shot="sh010")


@pytest.fixture
def big(tmp_path: Path) -> Path:
    """Large enough that a blur of it runs for seconds on two cores."""
    rng = np.random.default_rng(3)
    channels = {c: rng.uniform(0, 2, (2160, 4096)).astype(np.float16) for c in "RGBA"}
    path = tmp_path / "big.exr"
    OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}, channels).write(str(path))
    return path
