"""This host's rates: `oxi probe --calibrate` measures them for real and caches them, `probe` and `--plan` show
them, `auto` weighs jobs by them, and a cache that does not fit this host (or is damaged) means the defaults."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oxi_cli.backends import rates_file
from oxi_cli.backends.cost import Rates, load_rates
from oxi_cli.backends.select import Workload, get_backend
from oxi_cli.ops import Blur
from tests.backends_under_test import every_backend_required as require_gpu

ROOT = Path(__file__).resolve().parents[2]
PLATE = ROOT / "examples" / "plate.exr"


def _oxi(*args: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("OXI_BACKEND", None)
    return subprocess.run([sys.executable, "-m", "oxi_cli", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)


def _positive(value: object) -> bool:
    return isinstance(value, float) and math.isfinite(value) and value > 0


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory) -> tuple[Path, dict]:
    """One real calibration (a few seconds) into a cache folder of its own, and what `probe --json` said."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    res = _oxi("probe", "--calibrate", "--json", cache=cache)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return cache, json.loads(res.stdout)


@pytest.fixture
def cache_home(tmp_path, monkeypatch) -> Path:
    """A rates cache folder for this test, read afresh by load_rates."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def _entry(**cpu: float) -> dict:
    """A cache entry for this host, with one measured adapter at index 0."""
    adapter = {"index": 0, "name": "Test GPU", "driver": "test 1.0", "kind": "discrete", "api": "Vulkan",
               "flops": 2e12, "color_flops": 1e12, "extra_start_s": 0.5, "upload_bps": 4e9, "download_bps": 3e9}
    return {"key": rates_file.host_key(), "measured_at": "2026-01-02T03:04:05", "seconds": 3.0,
            "host": {"flops_per_core": 2e9, "color_flops_per_core": 1e9, **cpu},
            "devices": {"gpu": {"list": [adapter], "auto": 0, "any": 0}}}


def _write(text: str | bytes) -> None:
    path = rates_file.cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)


def test_calibration_measures_the_cpu_backend_for_real(calibrated):
    cache, doc = calibrated
    cpu = next(d for d in doc["devices"] if d["kind"] == "cpu")
    assert cpu["rates"]["source"] == "measured"
    assert _positive(cpu["rates"]["flops_per_core"]) and _positive(cpu["rates"]["color_flops_per_core"])
    entry = next(iter(json.loads((cache / "oxi" / rates_file.cache_path().name).read_text())["hosts"].values()))
    assert entry["key"]["cores"] == os.cpu_count() and entry["host"]["threads"] == os.cpu_count()
    assert all(_positive(entry["host"][k]) for k in ("start_s", "open_s", "kernels_s"))
    assert doc["rates"]["source"] == "measured" and doc["calibration"]["cache"] == str(
        cache / "oxi" / rates_file.cache_path().name)


def test_calibration_measures_every_wgpu_adapter_for_real(calibrated):
    _, doc = calibrated
    gpus = [d for d in doc["devices"] if d["kind"] != "cpu"]
    if not gpus:
        message = f"no GPU adapter to calibrate: {doc['problems']}"
        pytest.fail(message) if require_gpu() else pytest.skip(message)
    assert not doc["problems"], doc["problems"]
    for gpu in gpus:
        rates = gpu["rates"]
        assert rates["source"] == "measured"
        assert all(_positive(rates[k]) for k in ("flops", "color_flops", "upload_bps", "download_bps"))
        assert math.isfinite(rates["extra_start_s"]) and rates["extra_start_s"] >= 0


def test_probe_reads_the_calibration_back_and_names_it(calibrated):
    cache, doc = calibrated
    again = _oxi("probe", "--json", cache=cache)
    assert again.returncode == 0, again.stderr
    read = json.loads(again.stdout)
    assert [d["rates"] for d in read["devices"]] == [d["rates"] for d in doc["devices"]]
    assert "calibration" not in read
    table = _oxi("probe", cache=cache)
    assert table.returncode == 0 and "rates: measured on this host" in table.stdout and "GFLOP/s" in table.stdout


def test_plan_prints_both_estimates_and_the_measured_rates(calibrated):
    cache, _ = calibrated
    for backend in ("auto", "cpu", "gpu"):
        res = _oxi("blur", str(PLATE), "unused.exr", "--sigma", "3", "--plan", "--json", "--backend", backend,
                   cache=cache)
        assert res.returncode == 0, res.stderr
        estimate = json.loads(res.stdout)["estimate"]
        assert _positive(estimate["cpu_s"]) and _positive(estimate["gpu_s"])
        assert estimate["rates"]["source"] == "measured"
    res = _oxi("blur", str(PLATE), "unused.exr", "--sigma", "3", "--plan", cache=cache)
    assert "estimate: CPU" in res.stdout and "rates: measured on this host" in res.stdout


def test_plan_without_a_cache_says_the_rates_are_defaults(tmp_path):
    res = _oxi("blur", str(PLATE), "unused.exr", "--sigma", "3", "--plan", cache=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "estimate: CPU" in res.stdout and "defaults from a 16-core host with an H100 GPU" in res.stdout


def test_cached_rates_round_trip(cache_home):
    _write(rates_file.merged(_entry()))
    rates = load_rates()
    gpu = rates.device("gpu")
    assert (rates.host.flops_per_core, rates.host.color_flops_per_core) == (2e9, 1e9)
    assert (gpu.flops, gpu.color_flops, gpu.extra_start_s) == (2e12, 1e12, 0.5)
    assert (gpu.upload_bps, gpu.download_bps, gpu.name) == (4e9, 3e9, "Test GPU")
    assert rates.measured_at and "measured on this host" in rates.describe()


def test_a_long_lived_process_reads_rates_calibrated_after_its_first_read(cache_home):
    _write(rates_file.merged(_entry()))
    assert load_rates().host.flops_per_core == 2e9
    # As `oxi probe --calibrate` in another process writes it, under a warm service worker: a new file put in place.
    path = rates_file.cache_path()
    path.with_suffix(".tmp").write_text(rates_file.merged(_entry(flops_per_core=5e9)))
    os.replace(path.with_suffix(".tmp"), path)
    assert load_rates().host.flops_per_core == 5e9
    path.unlink()
    assert load_rates().host.flops_per_core == Rates().host.flops_per_core


def test_an_unmeasured_adapter_keeps_the_default_gpu_rates(cache_home):
    _write(rates_file.merged(_entry()))
    rates = load_rates({"gpu": 7})
    assert rates.host.flops_per_core == 2e9 and rates.device("gpu") == Rates().device("gpu")
    assert not rates.device("gpu").name


def test_auto_weighs_the_job_with_the_cached_rates(cache_home):
    job = Workload([Blur(20.0)], 4096, 2160, 4, 2)
    _write(rates_file.merged(_entry()))
    estimate = job.estimate(threads=2)
    kernels_s = estimate.host_s - estimate.host_cold_s  # the rest: the kernels are not compiled in this new cache
    assert estimate.rates.measured_at and kernels_s == pytest.approx(Blur(20.0).work(4096, 2160, 4) / 4e9)
    forced = get_backend("cpu", threads=1, job=job)
    assert forced.estimate is not None and forced.estimate.rates.measured_at and "--backend cpu" in forced.reason


def test_calibrating_again_keeps_other_hosts_entries(cache_home):
    other = {**_entry(), "key": {**rates_file.host_key(), "cpu": "another CPU"}}
    _write(rates_file.merged(other))
    _write(rates_file.merged(_entry(flops_per_core=5e9)))
    hosts = json.loads(rates_file.cache_path().read_text())["hosts"]
    assert len(hosts) == 2 and load_rates().host.flops_per_core == 5e9


def _assert_defaults(note: str) -> None:
    rates = load_rates()
    assert rates == Rates(note=rates.note) and note in rates.note
    assert "defaults" in rates.describe() and "--calibrate" in rates.describe()


@pytest.mark.parametrize(
    "content",
    ["{not json", b"\xff\xfe\x00garbage", '{"format": 2, "hosts": []}', '{"format": 99, "hosts": {}}', "[1, 2, 3]",
     " " * (rates_file.MAX_BYTES + 1)],
    ids=["bad_json", "not_utf8", "hosts_not_an_object", "unknown_format", "not_an_object", "too_big"],
)
def test_a_damaged_cache_means_the_defaults(cache_home, content):
    _write(content)
    _assert_defaults("damaged")


def _set_cpu(value: object):
    return lambda entry: entry["host"].update(flops_per_core=value)


@pytest.mark.parametrize(
    "damage",
    [_set_cpu(float("nan")), _set_cpu(-1.0), _set_cpu("fast"), _set_cpu(True), lambda e: e.pop("host"),
     lambda e: e["devices"]["gpu"]["list"][0].pop("flops"), lambda e: e["devices"]["gpu"].update(list=[7])],
    ids=["nan", "negative", "text", "bool", "no_cpu", "adapter_without_flops", "adapter_not_an_object"],
)
def test_a_damaged_entry_means_the_defaults(cache_home, damage):
    entry = _entry()
    damage(entry)
    _write(rates_file.merged(entry))
    _assert_defaults("damaged")


def test_a_cache_from_an_older_oxi_means_the_defaults_until_calibrated_again(cache_home):
    _write(json.dumps({"format": 1, "hosts": {rates_file.key_id(rates_file.host_key()): _entry()}}))
    _assert_defaults("older oxi")


def test_an_older_oxis_cache_beside_this_one_is_left_as_it_is(cache_home):
    older = rates_file.cache_path().with_name("rates.json")  # format 1's file
    older.parent.mkdir(parents=True, exist_ok=True)
    older.write_text(json.dumps({"format": 1, "hosts": {"someone": {"cpu": {}}}}))
    before = older.read_bytes()
    _write(rates_file.merged(_entry()))
    assert older.read_bytes() == before and load_rates().measured_at


def test_an_entry_that_is_not_an_object_means_the_defaults(cache_home):
    _write(json.dumps({"format": rates_file.FORMAT, "hosts": {rates_file.key_id(rates_file.host_key()): "oops"}}))
    _assert_defaults("damaged")


@pytest.mark.parametrize(
    "change", [{"cores": -1}, {"oxi": "0.0.0-other"}, {"cpu": "another CPU"}, {"gpus": ["10de:2330 nvidia"]}],
    ids=["cores", "oxi_version", "cpu_model", "gpus"],
)
def test_a_cache_for_another_host_means_the_defaults(cache_home, change):
    entry = _entry()
    entry["key"] = {**entry["key"], **change}
    _write(rates_file.merged(entry))
    _assert_defaults("other hosts")


def test_a_folder_where_the_cache_should_be_means_the_defaults(cache_home):
    rates_file.cache_path().mkdir(parents=True)
    rates = load_rates()
    assert not rates.measured_at and "cannot be read" in rates.note


def test_a_damaged_cache_is_reported_by_probe_and_plan_without_a_traceback(tmp_path):
    (tmp_path / "oxi").mkdir()
    (tmp_path / "oxi" / rates_file.cache_path().name).write_text('{"format": 2, "hosts": {')
    probe = _oxi("probe", "--json", cache=tmp_path)
    assert probe.returncode == 0 and "Traceback" not in probe.stderr, probe.stderr
    rates = json.loads(probe.stdout)["rates"]
    assert rates["source"] == "defaults" and "damaged" in rates["note"]
    plan = _oxi("blur", str(PLATE), "unused.exr", "--sigma", "3", "--plan", cache=tmp_path)
    assert plan.returncode == 0 and "Traceback" not in plan.stderr and "damaged" in plan.stdout


def test_reading_the_rates_loads_neither_wgpu_nor_numba(cache_home):
    _write(rates_file.merged(_entry()))
    code = ("import sys; from oxi_cli.backends.cost import load_rates; r = load_rates(); "
            "assert r.measured_at, r; print(sorted(m for m in ('wgpu', 'numba') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_probe_says_when_an_adapter_is_not_the_one_measured(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _write(rates_file.merged(_entry()))  # adapter 0 measured as "Test GPU"
    res = _oxi("probe", "--json", cache=tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    if not [d for d in doc["devices"] if d["kind"] != "cpu"]:
        pytest.fail("no GPU adapter") if require_gpu() else pytest.skip("no GPU adapter")
    assert any("measured on Test GPU" in p and "--calibrate" in p for p in doc["problems"]), doc["problems"]


def test_calibrate_with_an_unwritable_cache_is_one_line_and_measures_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    res = _oxi("probe", "--calibrate", cache=blocker)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    ours = [line for line in res.stderr.splitlines() if line.startswith("oxi:")]
    assert ours == [ours[0]] and "cannot write the rates cache" in ours[0] and "XDG_CACHE_HOME" in ours[0]


def test_a_rate_leaves_out_what_every_call_costs_and_a_sizes_first_call(monkeypatch):
    # Calls as the H200 host's GPU made them: 12 ms each whatever the size, and 0.5 s more the first time a size
    # is run (what later calls reuse is built then). The rate is what more work costs: 1e9 a second here.
    from types import SimpleNamespace

    from oxi_cli.backends import calibrate

    clock = [0.0]
    monkeypatch.setattr(calibrate, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    built: set[tuple[int, int]] = set()

    def make(w: int, h: int):
        amount = float(w * h)

        def run() -> None:
            clock[0] += 0.012 + amount / 1e9 + (0.0 if (w, h) in built else 0.5)
            built.add((w, h))

        return run, amount

    assert calibrate._rate(make, lambda: None, calibrate.SIZES) == pytest.approx(1e9)
