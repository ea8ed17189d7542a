"""Backends from Python: probe() is `oxi probe --json`, open_backend() opens one now and keeps it, mistakes are the
command's errors."""

from __future__ import annotations

import json

import pytest

import oxi_cli as oxi
from oxi_cli.backends.registry import KINDS, with_devices
from tests.cli.conftest import run_oxi


def test_probe_is_the_document_oxi_probe_json_prints():
    done = run_oxi("probe", "--json", env={"OXI_BACKEND": ""})
    assert done.returncode == 0, done.stderr
    printed, found = json.loads(done.stdout), oxi.probe()
    assert set(found) == set(printed)
    assert [(d["kind"], d.get("name"), d.get("index")) for d in found["devices"]] == \
        [(d["kind"], d.get("name"), d.get("index")) for d in printed["devices"]]
    assert found["auto"] == printed["auto"]


def test_a_cpu_backend_opens_and_says_what_it_runs_on():
    cpu = oxi.open_backend("cpu")
    assert (cpu.kind, cpu.name) == ("cpu", "cpu")
    assert "cores" in cpu.device and "cpu" in repr(cpu)


def test_a_gpu_backend_opens_one_device_per_process_however_many_hold_it():
    from oxi_cli.backends.gpu.context import opened

    try:
        first = oxi.open_backend("gpu")
    except oxi.BackendUnavailable as e:
        pytest.skip(f"no GPU adapter: {e}")
    second = oxi.open_backend("gpu")
    assert first.name == second.name == "gpu"
    adapters = [d for d in oxi.probe()["devices"] if d["kind"] != "cpu"]
    assert first.device.startswith(adapters[0]["name"])
    assert len(opened()) == 1


@pytest.mark.parametrize(("kind", "device", "error", "flag_words"), [
    ("tpu", None, oxi.UsageError, f"--backend must be one of auto, {', '.join(KINDS)}, got 'tpu'"),
    ("cpu", 0, oxi.UsageError, f"--device picks {' or '.join(k.devices for k in with_devices())}; it cannot be used "
                               "with --backend cpu"),
    ("gpu", 99, oxi.BackendUnavailable, "--device 99 does not exist"),
])
def test_a_backend_that_cannot_be_had_is_the_commands_error(kind, device, error, flag_words):
    with pytest.raises(error, match=flag_words):
        oxi.open_backend(kind, device=device)
