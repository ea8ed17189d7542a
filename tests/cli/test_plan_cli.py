"""--plan shows what will happen without doing it; --memory-limit and --strategy steer real runs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from tests.cli.conftest import hdr_rgba, read_exr, run_oxi, write_exr


def test_plan_prints_json_and_writes_nothing(tmp_path: Path):
    big = write_exr(tmp_path / "big.exr", hdr_rgba(300, 200))
    out = tmp_path / "o.exr"
    res = run_oxi("blur", str(big), str(out), "--sigma", "2", "--plan", "--json", "--memory-limit", "1M")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["strategy"] == "streaming" and doc["count"] > 1 and doc["fits"]
    assert doc["ram_bytes"] <= doc["ram_budget"]
    assert doc["reason"]
    assert not out.exists()


def test_plan_panel_names_the_strategy(plate: Path, tmp_path: Path):
    res = run_oxi("cdl", str(plate), str(tmp_path / "o.exr"), "--sat", "0.8", "--plan")
    assert res.returncode == 0, res.stderr
    assert "single" in res.stdout and "why:" in res.stdout


def test_a_streamed_run_equals_the_single_pass_and_says_so(plate: Path, tmp_path: Path):
    single, streamed = tmp_path / "single.exr", tmp_path / "streamed.exr"
    assert run_oxi("blur", str(plate), str(single), "--sigma", "1.5").returncode == 0
    res = run_oxi("blur", str(plate), str(streamed), "--sigma", "1.5", "--memory-limit", "64K", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["strategy"] == "streaming"
    a, b = read_exr(single)[1], read_exr(streamed)[1]
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


def test_an_impossible_forced_strategy_is_one_clear_error(plate: Path, tmp_path: Path):
    res = run_oxi("blur", str(plate), str(tmp_path / "o.exr"), "--sigma", "2", "--strategy", "single",
                  "--memory-limit", "64K")
    assert res.returncode == 2
    assert "--strategy single needs" in res.stderr and "Traceback" not in res.stderr


def test_a_chain_with_nothing_to_compute_never_opens_the_gpu(plate: Path, tmp_path: Path):
    out = tmp_path / "copy.exr"
    res = run_oxi("run", str(plate), "-o", str(out), "--backend", "gpu", "--compression", "piz", "--json")
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    assert record["status"] == "ok" and record["device"] == "GPU not used (nothing to compute)"
    src, dst = read_exr(plate)[1], read_exr(out)[1]
    for name in src:
        np.testing.assert_array_equal(src[name], dst[name])


def test_plan_of_a_file_whose_header_lies_is_one_line_naming_it_once_and_exits_2(tmp_path: Path):
    import struct

    from tests.io.test_exr_header import attributes

    src = write_exr(tmp_path / "src.exr", hdr_rgba(16, 24))
    data = bytearray(src.read_bytes())
    at, _ = attributes(bytes(data))["dataWindow"]
    struct.pack_into("<iiii", data, at + 4, 0, 0, 100_000_000 - 1, 0)  # a 10^8-pixel data window
    lying = tmp_path / "lying.exr"
    lying.write_bytes(bytes(data))
    res = run_oxi("cdl", str(lying), str(tmp_path / "o.exr"), "--slope", "1.1", "--plan")
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("oxi: error: ") and "data window" in lines[0], res.stderr
    assert lines[0].count(str(lying)) == 1, lines[0]


def test_an_image_needing_more_memory_than_is_left_is_refused_before_decoding(tmp_path: Path):
    import resource
    import subprocess

    from tests.cli.conftest import OXI
    from tests.cli.test_cli_errors import assert_one_line_error
    from tests.io.files import flat_png

    # 2.5 GiB decoded, whole: a palette PNG is not read by bands (an RGB one is: tests/io/test_png_stream.py).
    big = flat_png(tmp_path / "big.png", 30000, 30000, palette=True)
    out = tmp_path / "o.png"

    def three_gib_of_data() -> None:  # ulimit -d 3G: what this process may allocate, as a farm's limit would
        resource.setrlimit(resource.RLIMIT_DATA, (3 << 30, resource.getrlimit(resource.RLIMIT_DATA)[1]))

    cmd = [OXI] if OXI else [sys.executable, "-m", "oxi_cli"]
    env = {**os.environ, "OXI_BACKEND": "cpu"}
    res = subprocess.run([*cmd, "cdl", str(big), str(out), "--slope", "1.1"], capture_output=True, text=True,
                         env=env, timeout=300, preexec_fn=three_gib_of_data)
    assert_one_line_error(res, 2, f"{big}: processing this 30000x30000 image needs", "GiB of memory, but")
    assert "ulimit -d" in res.stderr or "is available" in res.stderr  # a machine with less free than the limit
    assert "--jobs" not in res.stderr and not out.exists()
