"""`auto` weighs a job's arithmetic, transfers and start-up on each backend, never the device's rank alone."""

from __future__ import annotations

import tempfile
from pathlib import Path

from oxi_cli.backends.cost import DeviceRates, HostRates, Rates, chain_work, estimate
from oxi_cli.ops import Blur, Cdl, Resize

K8 = (8192, 4320)
# Measured on a 16-core host with an H100 GPU: these tests must not depend on a rates cache on the machine running them.
DEFAULTS = Rates()


def test_a_light_colour_op_stays_on_a_many_core_cpu():
    assert estimate([Cdl(slope=1.1)], *K8, channels=4, cores=16, rates=DEFAULTS).faster == "cpu"


def test_a_heavy_blur_goes_to_the_gpu():
    assert estimate([Blur(100.0)], *K8, channels=4, cores=16, rates=DEFAULTS).faster != "cpu"


def test_fewer_cores_move_the_break_even_towards_the_gpu():
    job = ([Blur(12.0)], *K8)
    assert estimate(*job, channels=4, cores=64, rates=DEFAULTS).faster == "cpu"
    assert estimate(*job, channels=4, cores=2, rates=DEFAULTS).faster != "cpu"


def test_each_op_is_counted_at_the_size_it_sees():
    shrink = Resize(1024, 540)
    before = chain_work([Blur(2.0), shrink], *K8, 4)
    after = chain_work([shrink, Blur(2.0)], *K8, 4)
    assert after.total < before.total  # a blur after the shrink has 64x fewer pixels to cover


def test_colour_ops_and_filters_are_counted_apart():
    work = chain_work([Cdl(slope=1.1), Blur(2.0)], *K8, 4)
    assert work.color == Cdl(slope=1.1).work(*K8, 4) and work.image == Blur(2.0).work(*K8, 4)


def test_a_slower_link_to_the_gpu_raises_its_estimate():
    fast = estimate([Cdl(slope=1.1)], *K8, channels=4, cores=16, rates=DEFAULTS)
    slower = Rates(devices={"gpu": DeviceRates(upload_bps=1e9)})
    slow = estimate([Cdl(slope=1.1)], *K8, channels=4, cores=16, rates=slower)
    assert slow.devices["gpu"].transfer_s > fast.devices["gpu"].transfer_s
    assert slow.seconds["gpu"] > fast.seconds["gpu"] and slow.host_s == fast.host_s


def test_slower_colour_kernels_raise_only_colour_work():
    slow = Rates(HostRates(color_flops_per_core=DEFAULTS.host.color_flops_per_core / 4))
    blur = ([Blur(5.0)], *K8)
    assert estimate(*blur, channels=4, cores=16, rates=slow).host_s == estimate(
        *blur, channels=4, cores=16, rates=DEFAULTS).host_s
    cdl = ([Cdl(slope=1.1)], *K8)
    assert estimate(*cdl, channels=4, cores=16, rates=slow).host_s > estimate(
        *cdl, channels=4, cores=16, rates=DEFAULTS).host_s


def test_a_batch_shares_the_gpu_start_between_its_files():
    chain = [Cdl(slope=1.1), Blur(5.25)]
    one = estimate(chain, 4096, 2160, channels=4, cores=16, rates=DEFAULTS)
    batch = estimate(chain, 4096, 2160, channels=4, cores=16, rates=DEFAULTS, files=32)
    assert batch.host_s == one.host_s and batch.devices["gpu"].kernel_s == one.devices["gpu"].kernel_s
    assert batch.devices["gpu"].start_s == one.devices["gpu"].start_s / 32


def test_cold_cpu_kernels_count_in_the_cpu_estimate():
    from oxi_cli.backends.cost import COLD_COLOR_SLOWDOWN, COLD_COLOR_START_S, COLD_IMAGE_SLOWDOWN

    job = ([Cdl(slope=1.1, power=1.2), Blur(3.0)], 4096, 2160)
    warm = estimate(*job, channels=4, cores=16, rates=DEFAULTS)
    cold_color = estimate(*job, channels=4, cores=16, rates=DEFAULTS, cold={"cdl", "half"})
    cold_both = estimate(*job, channels=4, cores=16, rates=DEFAULTS, cold={"cdl", "blur", "half"})
    color_s = Cdl(slope=1.1, power=1.2).work(4096, 2160, 4) / DEFAULTS.host.color_flops_per_core / 16
    image_s = Blur(3.0).work(4096, 2160, 4) / DEFAULTS.host.flops_per_core / 16
    assert abs(cold_color.host_s - warm.host_s - color_s * (COLD_COLOR_SLOWDOWN - 1) - COLD_COLOR_START_S) < 1e-9
    assert abs(cold_both.host_s - warm.host_s - color_s * (COLD_COLOR_SLOWDOWN - 1) - COLD_COLOR_START_S
               - image_s * (COLD_IMAGE_SLOWDOWN - 1)) < 1e-9
    assert cold_both.cold == ("blur", "cdl", "half") and "not compiled yet" in cold_both.lines()[0]
    waiting = estimate(*job, channels=4, cores=16, rates=DEFAULTS, cold={"cdl"}, compile_s=2.5)
    assert abs(waiting.host_s - warm.host_s - 2.5) < 1e-9 and waiting.seconds["gpu"] == warm.seconds["gpu"]


def test_a_small_cold_colour_job_is_estimated_with_its_stand_ins_start():
    """A 64x48 cdl whose kernels are cold: its stand-in (OpenColorIO) costs a fifth of a second before any pixel,
    where the estimate once said +0.00 s."""
    job = ([Cdl(slope=1.1)], 64, 48)
    warm = estimate(*job, channels=4, cores=2, rates=DEFAULTS)
    cold = estimate(*job, channels=4, cores=2, rates=DEFAULTS, cold={"cdl", "half"})
    assert cold.host_s - warm.host_s >= 0.2


def test_cold_modules_the_job_compiles_itself_count_their_compile_seconds(monkeypatch):
    """Jobs that wait for their kernels (OXI_WAIT_FOR_KERNELS=1) compile them first: the plan counts it."""
    from oxi_cli.backends.cpu.cold import EXPECTED_S
    from oxi_cli.backends.select import Workload

    monkeypatch.setenv("OXI_WAIT_FOR_KERNELS", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(Path(tempfile.mkdtemp())))
    monkeypatch.delenv("OXI_KERNEL_CACHE", raising=False)
    from oxi_cli import kernel_cache

    kernel_cache.location.cache_clear()
    try:
        est = Workload([Blur(3.0)], 64, 48, 4, 2).estimate(2)
    finally:
        kernel_cache.location.cache_clear()
    assert est.host_cold_s >= EXPECTED_S["blur"] and "blur" in est.cold


def test_auto_moves_a_job_to_the_gpu_while_its_cpu_kernels_compile():
    job = ([Blur(8.0)], *K8)
    assert estimate(*job, channels=4, cores=64, rates=DEFAULTS).faster == "cpu"
    assert estimate(*job, channels=4, cores=64, rates=DEFAULTS, cold={"blur"}, compile_s=6.0).faster != "cpu"


def test_auto_weighs_every_backend_with_devices_and_picks_the_fastest():
    fast_link = DeviceRates(upload_bps=2e11, download_bps=2e11, extra_start_s=0.0)
    rates = Rates(devices={"gpu": DeviceRates(), "other": fast_link})
    job = ([Blur(100.0)], *K8)
    est = estimate(*job, channels=4, cores=16, rates=rates)
    assert list(est.seconds) == ["cpu", "gpu", "other"] and est.faster == "other"
    assert estimate(*job, channels=4, cores=16, rates=rates, among=["gpu"]).faster == "gpu"


def test_a_device_held_open_costs_no_start():
    job = ([Cdl(slope=1.1)], 4096, 2160)
    cold = estimate(*job, channels=4, cores=16, rates=DEFAULTS)
    warm = estimate(*job, channels=4, cores=16, rates=DEFAULTS, held={"gpu"})
    assert warm.devices["gpu"].start_s == 0.0 < cold.devices["gpu"].start_s


def test_plan_json_names_each_estimate_and_rate_by_its_backend():
    doc = estimate([Blur(5.0)], 4096, 2160, channels=4, cores=16, rates=DEFAULTS).to_dict()
    assert {"cpu_s", "cpu_cold_s", "gpu_s", "gpu_start_s", "gpu_transfer_s", "gpu_kernel_s", "faster"} <= set(doc)
    assert {"cpu_flops_per_core", "cpu_color_flops_per_core", "gpu_flops", "gpu_upload_bps", "gpu_name",
            "source"} <= set(doc["rates"])
