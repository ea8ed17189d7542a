"""A backend is one package and one registry line: a third one is chosen, weighed, timed and probed by the
generic code, which names no backend."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oxi_cli.backends import registry
from oxi_cli.backends.select import Workload, auto_candidates, get_backend, held_kinds, kinds
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
    candidates = auto_candidates(backend, threads=2)
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
    assert "toy" in held_kinds(0)



def test_a_device_a_registered_backend_lacks_is_one_line_even_for_a_copy(toy, tmp_path, capsys):
    assert _oxi("run", str(PLATE), str(tmp_path / "copy.exr"), "--backend", "toy", "--device", "3") == 2
    assert "--device 3 does not exist: this machine has toy devices 0" in capsys.readouterr().err
    assert not (tmp_path / "copy.exr").exists()
