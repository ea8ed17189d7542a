"""Ctrl-C at any moment of start-up exits 130 with one line and no traceback; a reader that closes our stdout
(`oxi info ... | head -c 1`) ends oxi quietly, as it ends `cat`."""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import oxi_cli
from tests.cli.conftest import hdr_rgba, write_exr

SCRIPT = Path(sys.executable).with_name("oxi")
# The line of oxi_cli/__init__.py from which the command's SIGINT handler is in place.
GUARD_LINE = next(number for number, line in enumerate(Path(oxi_cli.__file__).read_text().splitlines(), 1)
                  if "SIGINT guarded from here" in line)


def landed_before_oxi_could_hold_it(err: str) -> bool:
    """Whether a traceback shows the signal landing before oxi's first handler was set: in Python's own start
    (no oxi frame), or in the package's first lines, up to the line that sets it."""
    frames = [(name, int(line)) for name, line in re.findall(r'File "([^"]+)", line (\d+)', err) if "oxi_cli" in name]
    return all(name.endswith(os.path.join("oxi_cli", "__init__.py")) and line <= GUARD_LINE for name, line in frames)


@functools.lru_cache(maxsize=1)
def interpreter_start() -> float:
    """Seconds this machine's Python takes to start and import `re` (what the console script runs before any
    of oxi's code): before that, SIGINT belongs to Python itself."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import re, runpy"], check=True)
    return time.perf_counter() - t0


def oxi_cmd(module: bool) -> list[str]:
    # The console script itself (not a shell shim in front of it), or `python -m oxi_cli`.
    return [sys.executable, "-m", "oxi_cli"] if module or not SCRIPT.exists() else [sys.executable, str(SCRIPT)]


@pytest.mark.parametrize("module", [False, True], ids=["script", "module"])
@pytest.mark.parametrize("delay", [0.03, 0.06, 0.12, 0.25, 0.5])
def test_ctrl_c_during_start_up_exits_130_without_a_traceback(tmp_path: Path, delay: float, module: bool):
    """`delay` counts from when the interpreter has started: oxi's imports, argument parsing, opening the
    backend, the work itself."""
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(64, 64))
    env = {**os.environ, "OXI_BACKEND": "cpu"}
    proc = subprocess.Popen([*oxi_cmd(module), "cdl", str(plate), str(tmp_path / "o.exr"), "--sat", "1.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(interpreter_start() + delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:  # it finished before the signal: nothing to check
        return
    if proc.returncode != 130 and landed_before_oxi_could_hold_it(err):
        pytest.skip("the signal landed while Python was starting, before oxi's first line could set a handler")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    assert not list(tmp_path.glob("*o.exr*"))


def test_ctrl_c_after_the_output_is_written_is_not_reported_as_an_interruption(tmp_path: Path):
    """Once the output file is in place the job is done: a Ctrl-C landing after that (while oxi reports and
    exits) must not say "interrupted, no output left" beside the written file, nor exit 130."""
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(64, 64))
    out = tmp_path / "o.exr"
    env = {**os.environ, "OXI_BACKEND": "cpu"}
    proc = subprocess.Popen([*oxi_cmd(True), "cdl", str(plate), str(out), "--sat", "1.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    while not out.exists() and proc.poll() is None:
        time.sleep(0.0005)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert out.exists()
    assert proc.returncode == 0, err
    assert "interrupted" not in err and "Traceback" not in err


def test_a_closed_stdout_ends_info_quietly(tmp_path: Path):
    files = [str(write_exr(tmp_path / f"p{i}.exr", hdr_rgba(4, 4, seed=i), aovs=False)) for i in range(150)]
    env = {**os.environ, "OXI_BACKEND": "cpu", "COLUMNS": "200"}
    proc = subprocess.Popen([*oxi_cmd(False), "info", *files], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    assert proc.stdout is not None
    proc.stdout.read(1)
    proc.stdout.close()  # as `head -c 1` does
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.wait(timeout=120)
    assert proc.returncode == 141, err
    assert err == ""


def interrupted_in(where: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture):
    """Run the entry point's dispatch with a Ctrl-C landing at `where` (set up by the caller); return its exit
    code and stderr lines."""
    from oxi_cli.cli.main import _invoke

    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(8, 8))
    monkeypatch.setattr(sys, "argv", ["oxi", "cdl", str(plate), str(tmp_path / "o.exr"), "--sat", "1.1"])
    code = _invoke()
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert not (tmp_path / "o.exr").exists(), where
    return code, lines


def test_ctrl_c_caught_by_typer_itself_still_says_interrupted(monkeypatch, tmp_path: Path, capsys):
    # Typer answers a KeyboardInterrupt in its own code (between parsing and oxi's reporting) with a silent
    # exit 130: the options object is built there.
    import oxi_cli.cli.common as common
    import oxi_cli.cli.main  # noqa: F401 (its commands are declared with the real BatchOptions)

    def ctrl_c(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(common, "BatchOptions", ctrl_c)
    code, lines = interrupted_in("argument parsing", monkeypatch, tmp_path, capsys)
    assert code == 130 and len(lines) == 1 and "interrupted" in lines[0], lines


def test_ctrl_c_inside_a_c_extension_import_is_an_interruption_not_an_import_error():
    # pybind11 modules (OpenEXR) turn a KeyboardInterrupt during their import into ImportError raised from it.
    from oxi_cli.cli.failures import exit_code_for, message_for

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise ImportError("initialization failed") from e
    except ImportError as error:
        assert exit_code_for(error) == 130
        assert message_for(error).startswith("interrupted")
    assert exit_code_for(ImportError("no module named foo")) == 1


def finished_then_interrupted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture,
                              args: tuple[str, ...] = ()):
    """Run the entry point's dispatch on one file whose Ctrl-C the caller has set to land after the file ended;
    return its exit code, stderr lines and --json records."""
    import json

    from oxi_cli.cli.main import _invoke

    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(8, 8))
    monkeypatch.setattr(sys, "argv", ["oxi", "cdl", str(plate), str(tmp_path / "o.exr"), "--sat", "1.1", *args])
    code = _invoke()
    captured = capsys.readouterr()
    assert (tmp_path / "o.exr").exists()
    records = [json.loads(ln) for ln in captured.out.splitlines() if ln.startswith("{")]
    return code, [ln for ln in captured.err.splitlines() if ln.strip()], records


def test_ctrl_c_while_the_finished_work_reports_is_held_and_the_report_comes_out_whole(monkeypatch, tmp_path, capsys):
    # A real SIGINT on the main thread while the progress display closes, after the output was renamed into place
    # (CI saw exit 130 and "interrupted" beside a written file): nothing is left to interrupt.
    from oxi_cli.batch.progress import Reporter

    end = Reporter.end

    def end_with_ctrl_c(self: Reporter) -> None:
        signal.raise_signal(signal.SIGINT)
        end(self)

    monkeypatch.setattr(Reporter, "end", end_with_ctrl_c)
    code, lines, records = finished_then_interrupted(monkeypatch, tmp_path, capsys, ("--json",))
    assert code == 0, lines
    assert not any("interrupted" in ln for ln in lines), lines
    assert [r["status"] for r in records] == ["ok"]


def test_ctrl_c_after_the_batch_returned_exits_with_its_status_not_130(monkeypatch, tmp_path, capsys):
    # Past the batch, the process only unwinds (Typer, a cluster's shutdown): a Ctrl-C there keeps the work's status.
    import oxi_cli.batch.runner as runner

    run_batch = runner.run_batch

    def run_then_ctrl_c(*args, **kwargs):
        run_batch(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_batch", run_then_ctrl_c)
    code, lines, _ = finished_then_interrupted(monkeypatch, tmp_path, capsys)
    assert code == 0 and lines == [], lines
