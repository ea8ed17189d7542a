"""process(): files through a chain on the command's batch runner; results are what --json prints, nothing is
printed, failures are oxi's exceptions with the command's lines, the caller's process is left as it was."""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import oxi_cli as oxi
from oxi_cli.batch.report import FileRecord
from tests.batch.helpers import by_input, exr_folder, listing, rgba
from tests.cli.conftest import hdr_rgba, read_exr, run_oxi, write_exr

# What differs between two runs of the same job: where and when, and this process's memory.
RUN_FIELDS = {"input", "output", "started", "finished", "seconds", "stages", "peak_memory_bytes", "estimate_bytes"}


@pytest.fixture
def plate(tmp_path: Path) -> Path:
    return write_exr(tmp_path / "plate.exr", hdr_rgba(37, 53), shot="sh010")


@pytest.fixture
def sequence(tmp_path: Path) -> Path:
    exr_folder(tmp_path / "shots", [f"plate.{f}.exr" for f in range(1001, 1005)])
    return tmp_path / "shots"


def test_one_file_gives_the_record_and_the_file_the_command_gives(plate: Path, tmp_path: Path, capfd):
    chain = oxi.Cdl(slope=(1.1, 1.0, 0.9), sat=0.9) | oxi.Resize("50%")
    capfd.readouterr()
    [result] = oxi.process(plate, tmp_path / "api.exr", chain, backend="cpu")
    assert capfd.readouterr() == ("", "")
    done = run_oxi("run", str(plate), str(tmp_path / "cli.exr"), "--cdl", "slope=1.1,1.0,0.9 sat=0.9",
                   "--resize", "50%", "--json")
    assert done.returncode == 0, done.stderr
    [record] = by_input(done.stdout).values()
    assert result.ok and result.output == tmp_path / "api.exr"
    assert {k: v for k, v in result.as_json().items() if k not in RUN_FIELDS} == \
        {k: v for k, v in record.items() if k not in RUN_FIELDS}
    assert set(result.as_json()) == set(record)
    api_header, api_planes = read_exr(tmp_path / "api.exr")
    cli_header, cli_planes = read_exr(tmp_path / "cli.exr")
    assert api_header["shot"] == cli_header["shot"] == "sh010"
    for name in cli_planes:
        np.testing.assert_array_equal(api_planes[name], cli_planes[name])


def test_a_result_holds_the_json_records_fields_in_its_order_and_none_of_the_batchs_own():
    # FileResult is declared field by field for the API's users (their editors complete it); this keeps it the
    # batch record's reported fields, so a field added to one and not the other fails here.
    record = FileRecord(Path("a.exr"), Path("out/a.exr"), status="failed", seconds=1.23456789, error="bad",
                        exit_code=2, required=False, traceback="Traceback ...")
    result = oxi.FileResult._of(record)
    assert [f.name for f in dataclasses.fields(result)] == list(record.as_json())
    assert result.as_json() == record.as_json() and result.seconds == 1.234568 and not result.ok
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.status = "ok"  # type: ignore[misc]


def test_a_sequence_with_frames_a_name_pattern_and_jobs(sequence: Path, tmp_path: Path):
    events: list[oxi.Progress] = []
    results = oxi.process(sequence / "plate.####.exr", tmp_path / "out", oxi.Cdl(slope=1.2), frames="1002-1004",
                          name="{base}_graded.{frame:04d}{ext}", jobs=2, backend="cpu", progress=events.append)
    assert [(r.frame, r.status, r.output.name) for r in results] == [
        (f, "ok", f"plate_graded.{f}.exr") for f in (1002, 1003, 1004)]
    finished = [e.result for e in events if e.result is not None]
    assert sorted(r.frame for r in finished) == [1002, 1003, 1004]
    assert events[-1].files_done == events[-1].files_total == 3
    assert events[-1].bytes_done == events[-1].bytes_total
    np.testing.assert_allclose(rgba(tmp_path / "out" / "plate_graded.1003.exr")[..., 0],
                               np.float16(rgba(sequence / "plate.1003.exr")[..., 0] * np.float32(1.2)), rtol=1e-3)


def test_existing_outputs_are_refused_before_any_work_with_the_commands_line(sequence: Path, tmp_path: Path):
    oxi.process(sequence, tmp_path / "out", oxi.Blur(1), backend="cpu")
    with pytest.raises(oxi.UsageError, match="exist already; pass --overwrite") as caught:
        oxi.process(sequence, tmp_path / "out", oxi.Blur(1), backend="cpu")
    done = run_oxi("blur", str(sequence), "-o", str(tmp_path / "out"), "--sigma", "1")
    assert done.stderr == f"oxi: error: {caught.value}\n"
    skipped = oxi.process(sequence, tmp_path / "out", oxi.Blur(1), skip_existing=True)
    assert {r.status for r in skipped} == {"skipped"}


def test_a_missing_input_raises_the_commands_line_carrying_the_results(tmp_path: Path):
    with pytest.raises(oxi.InputError) as caught:
        oxi.process(tmp_path / "nope.exr", tmp_path / "out.exr", oxi.Cdl(slope=1.1))
    done = run_oxi("cdl", str(tmp_path / "nope.exr"), str(tmp_path / "out.exr"), "--slope", "1.1")
    assert (done.returncode, done.stderr) == (2, f"oxi: error: {caught.value}\n")
    assert [r.status for r in caught.value.results] == ["failed"]


def test_a_failed_file_stops_the_batch_unless_continue_on_error(sequence: Path, tmp_path: Path):
    (sequence / "plate.1002.exr").write_bytes(b"not an exr")
    with pytest.raises(oxi.InputError, match=r"plate\.1002\.exr") as caught:
        oxi.process(sequence, tmp_path / "a", oxi.Cdl(slope=1.1), backend="cpu")
    assert [r.status for r in caught.value.results] == ["ok", "failed", "not_started", "not_started"]
    # The exception that failed the file, its traceback reaching into the reader that refused it.
    assert any("/oxi_cli/io/" in str(entry.path) for entry in caught.traceback)
    results = oxi.process(sequence, tmp_path / "b", oxi.Cdl(slope=1.1), backend="cpu", continue_on_error=True)
    assert [r.status for r in results] == ["ok", "failed", "ok", "ok"]
    assert results[1].error_type == "InputError" and "plate.1002.exr" in results[1].error


def test_a_frame_missing_from_the_asked_range_is_an_input_error(sequence: Path, tmp_path: Path):
    with pytest.raises(oxi.InputError, match="plate.1005.exr: frame not on disk") as caught:
        oxi.process(sequence / "plate.####.exr", tmp_path / "out", oxi.Cdl(slope=1.1), frames="1004-1005")
    assert [r.status for r in caught.value.results] == ["ok", "missing"]


def test_a_progress_callback_that_raises_stops_the_batch_and_leaves_no_partial_output(sequence: Path,
                                                                                       tmp_path: Path):
    class Stop(Exception):
        pass

    def progress(event: oxi.Progress) -> None:
        if event.result is not None:
            raise Stop

    with pytest.raises(Stop):
        oxi.process(sequence, tmp_path / "out", oxi.Blur(2), backend="cpu", progress=progress)
    assert listing(tmp_path / "out") == ["plate.1001.exr"]


def test_ctrl_c_raises_interrupted_with_every_files_result_and_no_partial_output(sequence: Path, tmp_path: Path):
    def ctrl_c(event: oxi.Progress) -> None:
        if event.result is not None:
            signal.raise_signal(signal.SIGINT)

    with pytest.raises(oxi.Interrupted) as caught:
        oxi.process(sequence, tmp_path / "out", oxi.Blur(2), backend="cpu", progress=ctrl_c)
    assert isinstance(caught.value, KeyboardInterrupt) and caught.value.exit_code == 130
    assert str(caught.value) == "interrupted; no partial output was left behind"
    assert [r.status for r in caught.value.results] == ["ok", "not_started", "not_started", "not_started"]
    assert listing(tmp_path / "out") == ["plate.1001.exr"]


def test_a_recipes_settings_apply_where_process_is_not_told(sequence: Path, tmp_path: Path):
    recipe = tmp_path / "proxy.toml"
    recipe.write_text('[output]\nname = "{base}_proxy.{frame}{ext}"\nout_type = "float"\n[[op]]\nresize = "50%"\n')
    results = oxi.process(sequence, tmp_path / "out", oxi.load_recipe(recipe), out_type="half")
    assert results[0].output == tmp_path / "out" / "plate_proxy.1001.exr"
    header, planes = read_exr(results[0].output)
    assert planes["R"].dtype == np.float16 and planes["R"].shape == (12, 16)


def test_a_backend_opened_once_runs_every_call(plate: Path, tmp_path: Path):
    cpu = oxi.open_backend("cpu")
    for k in range(3):
        [result] = oxi.process(plate, tmp_path / f"out{k}.exr", oxi.Cdl(slope=1.1), backend=cpu)
        assert result.backend == "cpu" and result.device == cpu.device


# Run in a process of its own: the API changes nothing there, its environment included (docs/API.md), though the
# GPU backend once set XDG_RUNTIME_DIR where it was unset and the CPU backend NUMBA_CACHE_DIR.
SETTINGS_SCRIPT = r"""
import json, os, signal, sys, threading, warnings
import numpy as np
import oxi_cli as oxi
import oxi_cli.backends.gpu

def state():
    return {"sigint": repr(signal.getsignal(signal.SIGINT)), "hook": repr(threading.excepthook),
            "sys_hook": repr(sys.excepthook), "filters": repr(warnings.filters), "stdout": repr(sys.stdout),
            "stderr": repr(sys.stderr), "cwd": os.getcwd(), "umask": os.umask(0o22)}

env, before = dict(os.environ), state()
os.umask(0o22)
oxi.process(sys.argv[1], sys.argv[2], oxi.Cdl(slope=1.1) | oxi.Resize("50%"), backend="cpu", jobs=2)
oxi.apply(np.ones((8, 8, 3), np.float32), oxi.Cdl(slope=1.1), backend="cpu")
changed = sorted(k for k in {*env, *os.environ} if env.get(k) != os.environ.get(k))
print(json.dumps({"same": state() == before, "changed": changed}))
"""


def test_the_callers_process_settings_are_left_as_they_were(sequence: Path, tmp_path: Path):
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_RUNTIME_DIR")}
    done = subprocess.run([sys.executable, "-c", SETTINGS_SCRIPT, str(sequence), str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    report = json.loads(done.stdout)
    assert report["same"]
    assert report["changed"] == []


def test_a_batch_failure_names_its_file_as_the_command_prints_it(tmp_path: Path):
    import OpenEXR

    folder = tmp_path / "in"
    exr_folder(folder, ["a.exr"])
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}
    OpenEXR.File(header, {"Z": np.ones((8, 8), np.float32)}).write(str(folder / "b_depth.exr"))
    with pytest.raises(oxi.UsageError) as caught:
        oxi.process(folder, tmp_path / "out", oxi.Cdl(slope=1.1), backend="cpu")
    assert str(caught.value) == f"{folder / 'b_depth.exr'}: {caught.value.__cause__}"
    assert str(caught.value.__cause__) == "colour operations need R, G and B channels; this image has Z"
    done = run_oxi("cdl", str(folder), "-o", str(tmp_path / "cli"), "--slope", "1.1")
    assert f"oxi: error: {caught.value}\n" in done.stderr


@pytest.mark.parametrize(
    ("options", "args"),
    [({"jobs": 0}, ["--jobs", "0"]), ({"backend": "cpu", "device": 0}, ["--backend", "cpu", "--device", "0"]),
     ({"compression": "zipp"}, ["--compression", "zipp"])],
    ids=["--jobs", "--device", "--compression"],
)
def test_a_process_option_out_of_range_is_refused_with_the_commands_message_before_any_work(tmp_path: Path, options,
                                                                                              args: list[str]):
    folder = tmp_path / "in"
    exr_folder(folder, ["a.exr", "b.exr"])
    with pytest.raises(oxi.UsageError) as caught:
        oxi.process(folder, tmp_path / "out", oxi.Cdl(slope=1.1), **options)
    assert not (tmp_path / "out").exists()
    done = run_oxi("cdl", str(folder), "-o", str(tmp_path / "cli"), "--slope", "1.1", *args)
    assert done.returncode == 2 and done.stderr == f"oxi: error: {caught.value}\n"


def test_no_signal_handler_or_thread_hook_is_set_even_when_ctrl_c_stops_a_running_file(sequence: Path,
                                                                                      tmp_path: Path, monkeypatch):
    """The command holds SIGINT back while it writes a record and quiets threads ending of Ctrl-C with a
    process-wide hook; a Python caller keeps its own."""
    import threading

    installed: list[object] = []
    real = signal.signal
    monkeypatch.setattr(signal, "signal", lambda sig, handler: installed.append(handler) or real(sig, handler))
    hook = threading.excepthook
    oxi.process(sequence, tmp_path / "done", oxi.Cdl(slope=1.1), backend="cpu", jobs=2)

    big = write_exr(tmp_path / "big.exr", hdr_rgba(512, 256), aovs=False)
    (tmp_path / "stopped").mkdir()

    def ctrl_c_mid_file(event: oxi.Progress) -> None:
        if event.result is None and not installed:  # a band of the file is done, the rest is not
            installed.append("ctrl-c sent")
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            time.sleep(0.5)  # the file is still running when the main thread takes the Ctrl-C

    with pytest.raises(oxi.Interrupted) as caught:
        oxi.process(big, tmp_path / "stopped" / "big.exr", oxi.Blur(2), backend="cpu", strategy="streaming",
                    memory_budget="1M", progress=ctrl_c_mid_file)
    assert [r.status for r in caught.value.results] == ["interrupted"]
    assert listing(tmp_path / "stopped") == []
    assert installed == ["ctrl-c sent"] and threading.excepthook is hook
