"""Ctrl-C at any moment of start-up exits 130 with one line and no traceback; a reader that closes our stdout
(`oxi info ... | head -c 1`) ends oxi quietly, as it ends `cat`."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import hdr_rgba, write_exr

SCRIPT = Path(sys.executable).with_name("oxi")


@functools.lru_cache(maxsize=1)
def interpreter_start() -> float:
    """Seconds this machine's Python takes to start and import `re` (what the console script runs before any
    of oxi's code): before that, SIGINT belongs to Python itself."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import re, runpy"], check=True)
    return time.perf_counter() - t0


def oxi_cmd(module: bool) -> list[str]:
    # The console script itself (not a shell shim in front of it), or `python -m oxi_cli`.
    return [sys.executable, "-m", "oxi_cli"] if module or not SCRIPT.exists() else [sys.executable, str(SCRIPT)]


@pytest.mark.parametrize("module", [False, True], ids=["script", "module"])
@pytest.mark.parametrize("delay", [0.03, 0.06, 0.12, 0.25, 0.5])
def test_ctrl_c_during_start_up_exits_130_without_a_traceback(tmp_path: Path, delay: float, module: bool):
    """`delay` counts from when the interpreter has started: oxi's imports, argument parsing, opening the
    backend, the work itself."""
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(64, 64))
    env = {**os.environ, "OXI_BACKEND": "cpu"}
    proc = subprocess.Popen([*oxi_cmd(module), "cdl", str(plate), str(tmp_path / "o.exr"), "--sat", "1.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(interpreter_start() + delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:  # it finished before the signal: nothing to check
        return
    if proc.returncode != 130 and "oxi_cli" not in err:
        pytest.skip("the signal landed while Python itself was starting (site imports), before any oxi code")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    assert not list(tmp_path.glob("*o.exr*"))


def test_ctrl_c_after_the_output_is_written_is_not_reported_as_an_interruption(tmp_path: Path):
    """Once the output file is in place the job is done: a Ctrl-C landing after that (while oxi reports and
    exits) must not say "interrupted, no output left" beside the written file, nor exit 130."""
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(64, 64))
    out = tmp_path / "o.exr"
    env = {**os.environ, "OXI_BACKEND": "cpu"}
    proc = subprocess.Popen([*oxi_cmd(True), "cdl", str(plate), str(out), "--sat", "1.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    while not out.exists() and proc.poll() is None:
        time.sleep(0.0005)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert out.exists()
    assert proc.returncode == 0, err
    assert "interrupted" not in err and "Traceback" not in err


def test_a_closed_stdout_ends_info_quietly(tmp_path: Path):
    files = [str(write_exr(tmp_path / f"p{i}.exr", hdr_rgba(4, 4, seed=i), aovs=False)) for i in range(150)]
    env = {**os.environ, "OXI_BACKEND": "cpu", "COLUMNS": "200"}
    proc = subprocess.Popen([*oxi_cmd(False), "info", *files], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    assert proc.stdout is not None
    proc.stdout.read(1)
    proc.stdout.close()  # as `head -c 1` does
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.wait(timeout=120)
    assert proc.returncode == 141, err
    assert err == ""
