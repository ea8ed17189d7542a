"""Backend selection (--backend / OXI_BACKEND / --device, auto's ranking) and `oxi probe`, for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from oxi_cli.backends import registry
from oxi_cli.backends.gpu import device as gpu_device
from oxi_cli.backends.gpu.device import AdapterInfo, best
from oxi_cli.backends.select import auto_choice, get_backend, resolve_kind
from oxi_cli.errors import BackendUnavailable, UsageError
from oxi_cli.ops import Cdl
from tests.ops.harness import run_color

ROOT = Path(__file__).resolve().parents[2]


def _adapter(index: int, kind: str, api: str = "Vulkan", name: str = "gpu") -> AdapterInfo:
    return AdapterInfo(index, name, api, kind, "driver", 0, 0, 1 << 31, 1 << 27, 1024, 2048, True)


@pytest.mark.parametrize(
    ("kinds", "auto_pick", "gpu_pick"),
    [
        ([("software", "Vulkan"), ("integrated", "Vulkan"), ("discrete", "Vulkan")], 2, 2),
        ([("software", "Vulkan"), ("integrated", "Vulkan")], 1, 1),
        ([("discrete", "OpenGL"), ("discrete", "Vulkan")], 1, 1),  # same GPU twice: native API first
        ([("software", "OpenGL"), ("software", "Vulkan")], None, 1),  # auto: Numba CPU beats software
        ([("unknown", "Vulkan"), ("software", "Vulkan")], None, 0),
        ([], None, None),
    ],
    ids=["discrete_first", "integrated_over_software", "vulkan_over_gl", "software_only", "unknown", "none"],
)
def test_auto_ranks_discrete_integrated_cpu_software(kinds, auto_pick, gpu_pick):
    adapters = [_adapter(i, kind, api) for i, (kind, api) in enumerate(kinds)]
    index, reason = gpu_device.auto_pick(adapters)
    assert index == auto_pick and reason
    picked = best(adapters, gpu_only=False)
    assert (picked.index if picked else None) == gpu_pick


def test_explicit_kind_beats_env_and_auto_defers_to_it(monkeypatch):
    monkeypatch.setenv("OXI_BACKEND", "cpu")
    assert resolve_kind("auto") == "cpu" and resolve_kind(None) == "cpu"
    assert resolve_kind("gpu") == "gpu"
    monkeypatch.setenv("OXI_BACKEND", "tpu")
    with pytest.raises(UsageError, match="OXI_BACKEND"):
        resolve_kind("auto")
    monkeypatch.delenv("OXI_BACKEND")
    with pytest.raises(UsageError, match="--backend"):
        resolve_kind("tpu")


def test_cpu_backend_and_device_do_not_mix(monkeypatch):
    monkeypatch.delenv("OXI_BACKEND", raising=False)
    assert get_backend("cpu", threads=1).name == "cpu"
    with pytest.raises(UsageError, match="--device"):
        get_backend("cpu", device=0)


def test_gpu_backend_uses_the_best_adapter_of_any_kind(gpu_backend, monkeypatch):
    monkeypatch.delenv("OXI_BACKEND", raising=False)
    b = get_backend("gpu")  # opens in the background; the first use waits for it
    assert b.name == "gpu" and b.adapter.index == gpu_backend.adapter.index
    out = run_color(b, np.full((2, 3, 4), 0.5, np.float32), "cdl", Cdl(slope=2.0))
    assert np.allclose(out[..., :3], 1.0) and np.allclose(out[..., 3], 0.5)
    monkeypatch.setenv("OXI_BACKEND", "gpu")
    assert get_backend("auto").name == "gpu"


def test_missing_adapter_is_a_one_line_error_with_gpu_and_a_warning_with_auto(gpu_backend, monkeypatch, capsys):
    monkeypatch.delenv("OXI_BACKEND", raising=False)
    backend = get_backend("gpu", device=99)
    for _ in range(2):  # and again on a second use
        with pytest.raises(BackendUnavailable, match="--device 99 does not exist") as info:
            backend.limits()
        assert "\n" not in str(info.value)
    backend = get_backend("auto", device=99)
    assert backend.name == "cpu"
    assert "warning" in capsys.readouterr().err


def test_cli_with_a_missing_gpu_exits_2_with_one_line(gpu_backend, tmp_path):
    out = tmp_path / "out.exr"
    res = _oxi("cdl", str(ROOT / "examples" / "plate.exr"), str(out), "--slope", "2", "--backend", "gpu",
               "--device", "99")
    assert res.returncode == 2, res.stderr
    # Only oxi's own lines count: Mesa's loader may complain about XDG_RUNTIME_DIR on machines without one.
    ours = [line for line in res.stderr.splitlines() if "XDG_RUNTIME_DIR" not in line]
    assert len(ours) == 1 and ours[0].startswith("oxi: error: --device 99 does not exist"), res.stderr
    assert not out.exists()


def test_auto_here_matches_the_ranking(monkeypatch):
    monkeypatch.delenv("OXI_BACKEND", raising=False)
    assert get_backend("auto").name == auto_choice().kind


def _oxi(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "oxi_cli", *args], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
             **env},
        cwd=ROOT,
    )


def test_probe_json_lists_adapters_cpu_and_why_auto_picks(gpu_backend):
    res = _oxi("probe", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    gpus = [d for d in doc["devices"] if d["backend"] == "gpu"]
    cpu = [d for d in doc["devices"] if d["kind"] == "cpu"]
    assert gpu_backend.adapter.name in {g["name"] for g in gpus}
    for g in gpus:
        assert {"index", "name", "api", "kind", "driver", "max_buffer", "max_binding", "max_workgroup_size",
                "max_texture_3d", "shader_f16", "memory"} <= set(g)
    assert len(cpu) == 1 and {"cores", "threads", "simd", "cache_dir"} <= set(cpu[0])
    assert sum(d["auto"] for d in doc["devices"]) == 1
    assert doc["auto"]["backend"] in registry.KINDS and doc["auto"]["reason"]


def test_probe_table_names_the_pick():
    res = _oxi("probe", COLUMNS="120")
    assert res.returncode == 0, res.stderr
    assert "auto picks:" in res.stdout and "CPU backend" in res.stdout and "kernel threads" in res.stdout
    assert "kernel cache:" in res.stdout


@pytest.mark.parametrize(
    "env",
    [{"WGPU_LIB_PATH": "/nonexistent/libwgpu_native.so"}, {"VK_DRIVER_FILES": "/nonexistent/icd.json",
                                                          "VK_ICD_FILENAMES": "/nonexistent/icd.json"}],
    ids=["wgpu_library_missing", "vulkan_driver_missing"],
)
def test_probe_never_crashes_without_a_usable_gpu_stack(env):
    res = _oxi("probe", "--json", **env)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [d for d in doc["devices"] if d["kind"] == "cpu"]
    assert all(d["api"] != "Vulkan" for d in doc["devices"] if d["kind"] != "cpu")
    if "WGPU_LIB_PATH" in env:
        assert doc["auto"]["backend"] == "cpu" and any("wgpu" in p for p in doc["problems"])


def test_auto_falls_back_to_the_cpu_after_a_gpu_failure_and_gpu_does_not(gpu_backend, monkeypatch, capsys):
    from oxi_cli.backends.gpu.backend import GpuFailure

    monkeypatch.delenv("OXI_BACKEND", raising=False)
    auto = get_backend("auto", device=gpu_backend.adapter.index)  # auto, on the GPU even if it is software
    assert auto.name == "gpu"
    rows = auto.limits().max_buffer_bytes // 16 + 1
    with pytest.raises(GpuFailure) as info:  # more than the device holds in one buffer
        auto.allocate(rows, 1, 4)
    cpu = auto.fall_back(info.value)
    assert cpu.name == "cpu" and auto.name == "cpu"
    assert "redoing it on the CPU backend" in capsys.readouterr().err
    explicit = get_backend("gpu")
    with pytest.raises(GpuFailure):
        explicit.fall_back(info.value)


def test_open_early_hands_its_backend_to_get_backend(gpu_backend, monkeypatch):
    from oxi_cli.backends import select

    monkeypatch.delenv("OXI_BACKEND", raising=False)
    select.open_early("gpu", gpu_backend.adapter.index)
    early = select._EARLY[("gpu", gpu_backend.adapter.index)]
    assert get_backend("gpu", gpu_backend.adapter.index) is early and not select._EARLY
    assert early.name == "gpu" and early.adapter.index == gpu_backend.adapter.index
    select.open_early("cpu", None)
    select.open_early("tpu", None)  # left for get_backend to report
    select.open_early("auto", None)  # auto weighs the job before it opens anything
    assert not select._EARLY
