"""A backend is one package and one registry line: a third one is chosen, weighed, timed and probed by the
generic code, which names no backend."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from oxi_cli.backends import registry
from oxi_cli.backends.select import Workload, auto_candidates, get_backend, held_kinds, kinds, ranked
from oxi_cli.batch.trial import timed_candidates
from oxi_cli.ops import Blur
from tests.cli.conftest import read_exr

ROOT = Path(__file__).resolve().parents[2]
PLATE = ROOT / "examples" / "plate.exr"


@pytest.fixture
def toy(monkeypatch):
    from tests.backends import toy_backend

    kind = registry.BackendKind("toy", "Toy", "tests.backends", "toy_backend:open_toy",
                                "toy_backend:describe_devices", "numba", "a toy device", False, "use another",
                                present="toy_backend:present", chooser="toy_backend:auto_device",
                                holder="toy_backend:held", lister="toy_backend:listed")
    monkeypatch.setitem(registry.KINDS, "toy", kind)
    monkeypatch.delenv("OXI_BACKEND", raising=False)
    toy_backend.OPENED.clear()
    return kind


def _oxi(*args: str) -> int:
    from oxi_cli.cli.main import app

    try:
        return app(args=list(args), prog_name="oxi", standalone_mode=False) or 0
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1


def test_a_registered_backend_is_a_backend_choice_and_runs_a_job(toy, tmp_path, capsys):
    assert "toy" in kinds()
    for name in ("cpu", "toy"):
        assert _oxi("blur", str(PLATE), str(tmp_path / f"{name}.exr"), "--sigma", "2", "--backend", name,
                    "--json") == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert [r["backend"] for r in records if "backend" in r][-2:] == ["cpu", "toy"]
    _, cpu = read_exr(tmp_path / "cpu.exr")
    _, toy_out = read_exr(tmp_path / "toy.exr")
    for channel in cpu:
        np.testing.assert_array_equal(toy_out[channel], cpu[channel])


def test_auto_weighs_a_registered_backend_against_the_host(toy):
    heavy = Workload([Blur(100.0)], 8192, 4320, 4, 2)
    backend = get_backend("auto", threads=2, job=heavy)
    assert "toy" in backend.weighed.seconds and backend.weighed.faster != registry.HOST
    candidates = auto_candidates(backend, 2, timed_candidates(backend.weighed))
    assert list(candidates)[0] == registry.HOST and "toy" in candidates


def test_plan_shows_the_estimate_of_every_registered_backend(toy, capsys):
    assert _oxi("blur", str(PLATE), "unused.exr", "--sigma", "3", "--plan", "--json", "--backend", "cpu") == 0
    estimate = json.loads(capsys.readouterr().out)["estimate"]
    assert estimate["toy_s"] > 0 and "toy_start_s" in estimate and estimate["rates"]["toy_name"] == ""


def test_probe_lists_a_registered_backends_devices_and_a_held_device_is_known(toy):
    from oxi_cli.cli.probe import collect

    doc = collect()
    assert any(d["kind"] == "toy" for d in doc["devices"])
    toy.open(0, 1)
    assert "toy" in held_kinds({"toy": 0}) and "toy" not in held_kinds({"toy": 1})


def test_a_device_a_registered_backend_lacks_is_one_line_even_for_a_copy(toy, tmp_path, capsys):
    assert _oxi("run", str(PLATE), str(tmp_path / "copy.exr"), "--backend", "toy", "--device", "3") == 2
    assert "--device 3 does not exist: this machine has toy devices 0" in capsys.readouterr().err
    assert not (tmp_path / "copy.exr").exists()


@pytest.fixture
def toy_after_a_deviceless_one(toy, monkeypatch):
    """Only the host, then a backend whose devices auto would not use, then the toy (with one it would)."""
    deviceless = dataclasses.replace(toy, name="soft", label="Soft", chooser="toy_backend:no_auto_device")
    monkeypatch.setattr(registry, "KINDS", {registry.HOST: registry.KINDS[registry.HOST], "soft": deviceless,
                                            "toy": toy})
    return toy


def test_auto_goes_on_to_the_next_backend_when_the_first_has_no_device_it_would_use(toy_after_a_deviceless_one):
    assert get_backend("auto", threads=2).name == "toy"  # no job: the first present backend with such a device
    heavy = Workload([Blur(100.0)], 8192, 4320, 4, 2)
    backend = get_backend("auto", threads=2, job=heavy)
    assert ranked(backend.weighed)[0] == "soft"  # default rates alike: the first registered wins the tie
    assert backend.name == "toy"


def test_the_api_weighs_as_the_command_does(toy_after_a_deviceless_one, monkeypatch):
    from oxi_cli.api.devices import backend_for

    # A job that waits for kernels the cache lacks would count their compile on the host: not this test's subject.
    monkeypatch.setenv("OXI_WAIT_FOR_KERNELS", "0")

    assert backend_for(None, [], 64, 48, 4, 2).name == registry.HOST  # nothing to compute: no device costs less
    assert backend_for(None, [Blur(100.0)], 8192, 4320, 4, 2).name == "toy"


def test_a_trial_times_the_host_and_the_backends_near_the_fastest_only():
    near = SimpleNamespace(seconds={"cpu": 9.0, "gpu": 1.0, "toy": 3.0, "far": 40.0})
    assert timed_candidates(near) == ["cpu", "gpu", "toy"]
