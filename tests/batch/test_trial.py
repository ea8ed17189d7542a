"""`auto` on a batch whose estimate is close times one frame on each backend and gives the rest to the faster."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from typer.testing import CliRunner

from oxi_cli.batch import runner, trial
from oxi_cli.batch.trial import FRAMES_EACH, MIN_FILES, Trial, worth_timing
from tests.backends_under_test import opened
from tests.batch.helpers import exr_folder, records, rgba


def _estimate(cpu_s: float, gpu_s: float) -> SimpleNamespace:
    return SimpleNamespace(seconds={"cpu": cpu_s, "gpu": gpu_s})


def test_close_estimates_of_a_long_batch_are_timed_and_far_ones_trusted():
    assert worth_timing(_estimate(0.07, 0.15), 32)
    assert worth_timing(_estimate(0.15, 0.07), 32)
    assert not worth_timing(_estimate(0.02, 0.15), 32)  # the CPU is clearly faster
    assert not worth_timing(_estimate(0.07, 0.15), MIN_FILES - 1)  # too few frames to pay for the trial
    assert not worth_timing(None, 32)  # auto weighed nothing: no hardware GPU, or a forced backend


def test_trial_hands_frames_to_each_backend_then_to_the_faster_timed_one():
    cpu, gpu = "cpu backend", "gpu backend"
    t = Trial({"cpu": cpu, "gpu": gpu})
    handed = [t.next_backend() for _ in range(2 * FRAMES_EACH)]
    assert [b for b, _ in handed] == [cpu] * FRAMES_EACH + [gpu] * FRAMES_EACH
    for backend, slot in handed:  # warm-up frames slow, timed frames as measured
        t.finished(slot, {cpu: 0.27, gpu: 0.18}[backend] * (3 if slot % FRAMES_EACH == 0 else 1), backend[:3])
    assert t.next_backend() == (gpu, None)
    verdict = t.verdict()
    assert verdict is not None and "CPU 0.27 s, GPU 0.18 s" in verdict
    assert t.verdict() is None  # said once


def test_a_gpu_that_fell_back_to_the_cpu_or_failed_loses_the_trial():
    for ran_on, seconds in (("cpu", 0.1), ("gpu", None)):
        t = Trial({"cpu": "c", "gpu": "g"})
        for _ in range(2 * FRAMES_EACH):
            backend, slot = t.next_backend()
            t.finished(slot, 0.5 if backend == "c" else seconds, "cpu" if backend == "c" else ran_on)
        assert t.next_backend() == ("c", None)


@pytest.mark.parametrize("gpu_wins", [True, False])
def test_a_timed_batch_runs_its_frames_on_both_backends_then_one_and_matches_the_cpu(tmp_path, monkeypatch,
                                                                                    gpu_wins):
    """The real runner, the real CPU backend and the GPU tests' adapter (lavapipe in CI) as the candidates;
    only the verdict is steered, by the seconds the trial reads."""
    from oxi_cli.backends import select

    gpu = opened("gpu")  # skips, or fails under OXI_REQUIRE_GPU, without an adapter
    pair = {"cpu": select._deferred_cpu(2), "gpu": select.DeferredBackend(lambda: gpu, fallback=None, name="gpu")}
    monkeypatch.setattr(runner, "worth_timing", lambda estimate, files: True)
    monkeypatch.setattr(runner, "timed_candidates", lambda estimate: list(pair))
    monkeypatch.setattr(select, "auto_candidates", lambda chosen, threads, names: pair)
    real_finished = trial.Trial.finished

    def steered(self, slot, seconds, ran_on):  # noqa: ANN001
        real_finished(self, slot, None if seconds is None else {"gpu": 1.0, "cpu": 2.0}[ran_on] if gpu_wins
                      else {"gpu": 2.0, "cpu": 1.0}[ran_on], ran_on)

    monkeypatch.setattr(trial.Trial, "finished", steered)
    names = [f"f.{1001 + i}.exr" for i in range(MIN_FILES)]
    exr_folder(tmp_path / "in", names)
    from oxi_cli.cli.main import app

    result = CliRunner().invoke(app, ["cdl", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--power", "1.3",
                                      "--json", "--backend", "auto", "--threads", "2"])
    assert result.exit_code == 0, result.output
    backends = [r["backend"] for r in records(result.stdout)]
    rest = "gpu" if gpu_wins else "cpu"
    assert backends == ["cpu"] * FRAMES_EACH + ["gpu"] * FRAMES_EACH + [rest] * (MIN_FILES - 2 * FRAMES_EACH)
    for name in names:  # every frame as the CPU computes it (within the GPU parity tolerance)
        single = tmp_path / f"single_{name}"
        assert CliRunner().invoke(app, ["cdl", str(tmp_path / "in" / name), str(single), "--power", "1.3",
                                        "--backend", "cpu"]).exit_code == 0
        np.testing.assert_allclose(rgba(tmp_path / "out" / name), rgba(single), rtol=2e-3, atol=1e-6)


def test_the_fastest_timed_frame_of_each_backend_decides_so_one_slow_frame_does_not():
    t = Trial({"cpu": "c", "gpu": "g"})
    gpu_times = iter([0.50] + [0.18] * (FRAMES_EACH - 2))  # the first timed GPU frame hit by noise
    for _ in range(2 * FRAMES_EACH):
        backend, slot = t.next_backend()
        warm_up = slot % FRAMES_EACH == 0
        seconds = 1.0 if warm_up else 0.27 if backend == "c" else next(gpu_times)
        t.finished(slot, seconds, "cpu" if backend == "c" else "gpu")
    assert t.next_backend() == ("g", None)
    assert "CPU 0.27 s, GPU 0.18 s" in (t.verdict() or "")
