"""Ctrl-C during a batch: the file in progress is abandoned, no partial output is left, exit 130."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.batch.helpers import exr_folder, listing, output_to_the_end, rgba
from tests.cli.conftest import OXI


def test_sigint_abandons_the_running_file_and_leaves_no_partial_output(tmp_path: Path):
    # Files large enough (1024^2 float RGBA + AOVs, ~0.3-0.6 s each) that the signal lands inside one.
    (first_file,) = exr_folder(tmp_path / "in", ["f0.exr"], size=(1024, 1024), half=False)
    for i in range(1, 4):
        shutil.copy(first_file, tmp_path / "in" / f"f{i}.exr")
    out = tmp_path / "out"
    cmd = [OXI] if OXI else [sys.executable, "-m", "oxi_cli"]
    env = {**os.environ, "OXI_BACKEND": "cpu"}
    proc = subprocess.Popen([*cmd, "blur", str(tmp_path / "in"), "-o", str(out), "--sigma", "2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = json.loads(proc.stdout.readline())  # the first file is done; the second has just started
        assert first["status"] == "ok"
        time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        rest, err = output_to_the_end(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    recs = [first] + [json.loads(line) for line in rest.splitlines()]
    status = {Path(r["input"]).name: r["status"] for r in recs}
    assert status["f0.exr"] == "ok" and status["f1.exr"] == "interrupted"
    assert status["f2.exr"] == status["f3.exr"] == "not_started"
    # Only finished outputs exist (no hidden temporaries either), and each is whole.
    assert listing(out) == ["f0.exr"]
    assert rgba(out / "f0.exr").shape == (1024, 1024, 4)
