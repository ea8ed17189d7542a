"""Generated corrupt images, LUTs and CDLs through the real CLI: exit 2 and one line (or 0 and a valid output).

Never a traceback, an output file after a failure, a changed input or a slow run. Most cases run the CLI's
main function in this process (milliseconds each, stderr captured at the file-descriptor level so a
library's own line would show); a sample runs the installed `oxi` in a subprocess with a timeout.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from tests.cli.conftest import OXI
from tests.fuzz.corpus import Case, image_corpus, side_file_corpus

TIME_LIMIT = 20.0  # seconds for any one run; a run that exceeds it has hung or is allocating a lie
FLIPS, CUTS = 10, 6  # seeded bit flips and random truncations per valid file (fixed cut points come on top)
DAMAGED = re.compile(r"oxi: warning: .+: the file is damaged but was read \(.+\); check the result or re-export it")
SLOWEST: dict[str, tuple[float, str]] = {}  # how -> (seconds, case): printed at the end (pytest -s shows it)


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float


def in_process(capfd: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture, *args: str) -> Run:
    """`oxi ARGS` through the CLI's own main function; stdout and stderr as the file descriptors saw them.

    Log records pytest's handler sees count as stderr lines (outside pytest Python's last-resort handler would
    print those reaching the root, as it did libpng's "PNG warning:" lines); Python warnings count as the
    command prints them.
    """
    from oxi_cli.cli.main import app

    capfd.readouterr()
    caplog.clear()
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = app(args=list(args), prog_name="oxi", standalone_mode=False) or 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    seconds = time.perf_counter() - t0
    out, err = capfd.readouterr()
    logged = "".join(f"{r.getMessage()}\n" for r in caplog.records if r.levelno >= logging.WARNING)
    # The command prints each distinct Python warning once as `oxi: warning: TEXT` (cli/main.py).
    shown = "".join(f"oxi: warning: {text}\n" for text in dict.fromkeys(str(w.message) for w in caught))
    return Run(code, out, logged + shown + err, seconds)


def in_subprocess(*args: str) -> Run:
    cmd = [OXI, *args] if OXI else [sys.executable, "-m", "oxi_cli", *args]
    env = {**os.environ, "OXI_BACKEND": "cpu", "COLUMNS": "200"}
    t0 = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return Run(-1, "", f"timed out after {TIME_LIMIT} s", TIME_LIMIT)
    return Run(res.returncode, res.stdout, res.stderr, time.perf_counter() - t0)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _note(how: str, case: str, seconds: float) -> None:
    if seconds > SLOWEST.get(how, (0.0, ""))[0]:
        SLOWEST[how] = (seconds, case)


def problems_of(name: str, run: Run, out: Path, valid_output: Callable[[Path], object]) -> list[str]:
    """What is wrong with one run: exit code, stderr shape, output left or missing, time."""
    found = []
    lines = [line for line in run.err.splitlines() if line.strip()]
    if "Traceback" in run.err + run.out:
        found.append(f"{name}: traceback: {run.err[-300:]!r}")
    if run.code == 2:
        if len(lines) != 1 or not lines[0].startswith("oxi: error: "):
            found.append(f"{name}: exit 2 with stderr {run.err[:400]!r}")
        if out.exists():
            found.append(f"{name}: exit 2 but {out.name} was written")
    elif run.code == 0:
        # A file that still decodes may earn oxi's one damaged-file warning, nothing else.
        if [line for line in lines if not DAMAGED.match(line)] or len(lines) > 1:
            found.append(f"{name}: exit 0 with stderr {run.err[:400]!r}")
        try:
            valid_output(out)
        except Exception as e:  # the corruption was harmless: the output must then be a good file
            found.append(f"{name}: exit 0 but the output is not valid ({type(e).__name__}: {e})")
    else:
        found.append(f"{name}: exit {run.code}: {run.err[:400]!r}")
    if leftovers := list(out.parent.glob(".*oxi-tmp*")):
        found.append(f"{name}: temporaries left: {[p.name for p in leftovers]}")
    if run.seconds > TIME_LIMIT:
        found.append(f"{name}: took {run.seconds:.1f} s")
    return found


def readable_image(path: Path) -> None:
    from oxi_cli.io import read_image

    read_image(path)


def run_case(
    case: Case, folder: Path, args: Callable[[Path, Path], list[str]], runner: Callable[..., Run], how: str
) -> list[str]:
    """Write the case, run `oxi` on it, check the run and that the input was left alone; clean up."""
    inp = case.write(folder / "in")
    out = folder / "out" / f"{case.name}-out{inp.suffix if inp.suffix in ('.exr', '.png', '.tif') else '.exr'}"
    before = digest(inp)
    run = runner(*args(inp, out))
    _note(how, case.name, run.seconds)
    found = problems_of(case.name, run, out, readable_image)
    if digest(inp) != before:
        found.append(f"{case.name}: the input was modified")
    out.unlink(missing_ok=True)
    return found


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Case], list[Case], Path]:
    root = tmp_path_factory.mktemp("fuzz")
    images = image_corpus(root, FLIPS, CUTS)
    sides = side_file_corpus(FLIPS, CUTS)
    return images, sides, root


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    return tmp_path


@pytest.fixture
def good_exr(folder: Path) -> Path:
    y, x = np.mgrid[0:12, 0:16].astype(np.float32) / 16
    path = folder / "good.exr"
    channels = {"R": x.astype(np.float16), "G": y.astype(np.float16), "B": (x * y).astype(np.float16)}
    OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}, channels).write(str(path))
    return path


def side_args(good: Path) -> Callable[[Path, Path], list[str]]:
    def args(inp: Path, out: Path) -> list[str]:
        if inp.suffix in (".cc", ".ccc", ".cdl"):
            return ["cdl", str(good), str(out), "--cdl", str(inp)]
        return ["lut3d", str(good), str(out), "--lut", str(inp)]

    return args


def image_args(inp: Path, out: Path) -> list[str]:
    # A grade that keeps 0..1 in 0..1: an 8/16-bit output clips nothing, so a file that decodes earns no warning
    # but the damaged-file one (a slope over 1 would rightly warn of the values a PNG clips).
    return ["cdl", str(inp), str(out), "--slope", "0.9"]


def report(found: list[str], count: int) -> None:
    assert not found, f"{len(found)} problems in {count} cases:\n" + "\n".join(found[:40])


def test_corrupt_images_fail_with_one_line_or_process_cleanly(corpus, folder, capfd, caplog, monkeypatch):
    monkeypatch.setenv("OXI_BACKEND", "cpu")
    images, _, _ = corpus
    runner = lambda *a: in_process(capfd, caplog, *a)  # noqa: E731
    found = [p for case in images for p in run_case(case, folder, image_args, runner, "image")]
    report(found, len(images))


def test_corrupt_luts_and_cdls_fail_with_one_line_or_process_cleanly(
    corpus, folder, good_exr, capfd, caplog, monkeypatch
):
    monkeypatch.setenv("OXI_BACKEND", "cpu")
    _, sides, _ = corpus
    before = digest(good_exr)
    runner = lambda *a: in_process(capfd, caplog, *a)  # noqa: E731
    found = [p for case in sides for p in run_case(case, folder, side_args(good_exr), runner, "side file")]
    assert digest(good_exr) == before
    report(found, len(sides))


def test_a_sample_through_the_installed_command(corpus, folder, good_exr):
    images, sides, _ = corpus
    sample = images[:: max(1, len(images) // 4)] + sides[:: max(1, len(sides) // 3)]  # ~1 s each: a few
    found = []
    for case in sample:
        args = image_args if case in images else side_args(good_exr)
        found += run_case(case, folder, args, in_subprocess, "subprocess")
    report(found, len(sample))


def test_a_damaged_tiff_that_still_decodes_gets_one_warning_naming_it(corpus, folder):
    # Strip counts that disagree with the image size: tifffile logs (several lines) and still decodes.
    images, _, _ = corpus
    case = next(c for c in images if c.name == "tif-deflate-lie-length_huge")
    inp = case.write(folder / "in")
    out = folder / "out" / "o.exr"
    run = in_subprocess("cdl", str(inp), str(out), "--slope", "1.1")
    lines = run.err.splitlines()
    assert run.code == 0 and out.exists(), run.err
    assert len(lines) == 1 and DAMAGED.match(lines[0]) and str(inp) in lines[0], run.err
    assert "StripByteCounts" in lines[0]


@pytest.mark.parametrize("ext", [".exr", ".png", ".tif"])
def test_info_stats_on_many_corrupt_files_gives_one_line_per_bad_file(corpus, folder, ext: str):
    images, _, _ = corpus
    paths = [case.write(folder / "in") for case in images if case.ext == ext]
    run = in_subprocess("info", "--stats", *map(str, paths))
    _note("info batch", f"{len(paths)} {ext} files", run.seconds)
    assert run.code in (0, 2) and "Traceback" not in run.err, run.err[-2000:]
    lines = [line for line in run.err.splitlines() if line.strip()]
    errors = [line for line in lines if not DAMAGED.match(line)]  # a damaged file that decodes: one warning
    named = [next((p for p in paths if line.startswith(f"oxi: error: {p}")), None) for line in errors]
    assert None not in named, [line for line, p in zip(errors, named, strict=True) if p is None][:5]
    assert len(set(named)) == len(named), "a file got more than one error line"
    warned = [line.split(": ")[2] for line in lines if DAMAGED.match(line)]
    assert len(set(warned)) == len(warned), "a file got more than one warning"
    assert run.seconds < TIME_LIMIT


@pytest.fixture(scope="module", autouse=True)
def report_the_slowest_runs() -> Iterator[None]:
    """Once this module's tests are done, the slowest run of each kind (shown with pytest -s): a report, not a test."""
    yield
    for how, (seconds, case) in sorted(SLOWEST.items()):
        print(f"slowest {how} run: {seconds:.2f} s ({case})")
