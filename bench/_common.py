"""Helpers shared by the bench scripts: timing child processes, their peak memory, tables and JSON."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def oiiotool_command() -> list[str] | None:
    """oiiotool itself: the binary inside PyPI's OpenImageIO package when there is one, because its `oiiotool`
    console script is a Python wrapper that adds an interpreter start (~0.1 s) to every run we time; else
    `oiiotool` on PATH; None when neither exists."""
    try:
        import OpenImageIO

        binary = Path(OpenImageIO.__file__).parent / "bin" / "oiiotool"
        if os.access(binary, os.X_OK):
            return [str(binary)]
    except ImportError:
        pass
    found = shutil.which("oiiotool")
    return [found] if found else None


def compile_oxi_bytecode() -> None:
    """Give oxi the .pyc files an installed wheel has: an editable checkout under PYTHONDONTWRITEBYTECODE
    would otherwise compile ~60 modules from source on every timed run (~0.05 s)."""
    import compileall

    compileall.compile_dir(str(REPO / "oxi_cli"), quiet=2)


class BenchError(Exception):
    """A command under test failed or a tool is missing; the message says which and why."""


@dataclass
class Sample:
    """One run of one command: wall seconds and the child's peak resident set size."""

    wall_s: float
    peak_rss_mb: float


@dataclass
class Measurement:
    """Several runs of one command, summarised as median wall time and the highest peak RSS."""

    cmd: list[str]
    samples: list[Sample] = field(default_factory=list)

    @property
    def median_s(self) -> float:
        return statistics.median(s.wall_s for s in self.samples)

    @property
    def peak_rss_mb(self) -> float:
        return max(s.peak_rss_mb for s in self.samples)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cmd": self.cmd,
            "median_s": round(self.median_s, 4),
            "peak_rss_mb": round(self.peak_rss_mb, 1),
            "samples": [asdict(s) for s in self.samples],
        }


# Runs one command for run_once() from a fresh, small interpreter. A child's ru_maxrss starts from the
# address space it was forked from (Linux keeps the pre-exec high-water mark), so forking tools straight
# from this process would report the benchmark's own RSS (GBs after making the plate). The wrapper
# forks from ~10 MB instead; that is the floor of every figure (see rss_floor_mb()).
_WRAPPER = r"""
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as exc:
        sys.stderr.write(f"cannot run {sys.argv[2]}: {exc}\n")
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as f:
    f.write(f"{wall} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def run_once(cmd: Sequence[str], env: Mapping[str, str] | None = None) -> Sample:
    """Run `cmd` to completion: wall time from fork to reap, peak RSS from the kernel's rusage (os.wait4).

    The figure is the tool's own high-water mark, including descendants it waited for.
    """
    return run_capturing(cmd, env)[0]


def run_capturing(cmd: Sequence[str], env: Mapping[str, str] | None = None) -> tuple[Sample, str]:
    """run_once(), also returning what `cmd` printed on stdout (oxi's --json records)."""
    # Benchmarks time oxi's kernels: a cold one compiles in the run that meets it (the untimed warm-up), rather
    # than the run going another way while a background process compiles (bench_first_run.py times that path).
    # Runs repeat one command into one output: it may replace its last run's (oxi refuses without consent).
    full_env = {"OXI_WAIT_FOR_KERNELS": "1", **os.environ, "OXI_OVERWRITE": "1", **(env or {})}
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out, \
            tempfile.NamedTemporaryFile("r", suffix=".txt") as res:
        wrapper = [sys.executable, "-I", "-S", "-c", _WRAPPER, res.name, *cmd]
        code = subprocess.run(wrapper, stdout=out, stderr=err, env=full_env).returncode
        fields = Path(res.name).read_text().split()
        if code != 0 or len(fields) != 3 or fields[2] != "0":
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-5:]
            status = fields[2] if len(fields) == 3 else code
            raise BenchError(f"exit {status}: {' '.join(cmd)}\n  " + "\n  ".join(tail))
        out.seek(0)
        printed = out.read().decode(errors="replace")
    # Linux reports ru_maxrss in KiB.
    return Sample(wall_s=round(float(fields[0]), 4), peak_rss_mb=round(int(fields[1]) / 1024, 1)), printed


def rss_floor_mb() -> float:
    """Peak RSS run_once() reports for `true`: the wrapper's share in every figure."""
    return run_once(["true"]).peak_rss_mb


def measure(
    cmd: Sequence[str], runs: int, env: Mapping[str, str] | None = None, before_each: Any = None
) -> Measurement:
    """Median-of-`runs` timing of `cmd`; `before_each()` (untimed) runs first each time, e.g. to delete outputs."""
    result = Measurement(cmd=list(cmd))
    for _ in range(runs):
        if before_each is not None:
            before_each()
        result.samples.append(run_once(cmd, env))
    return result


def fmt_s(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds:.2f}"


def fmt_mb(mb: float | None) -> str:
    return "–" if mb is None else f"{mb:.0f}"


def fmt_ratio(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio:.2f}"


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b when both exist, else None (a tool without that op)."""
    return None if a is None or b is None or b == 0 else a / b


def print_table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    caption: str = "",
    left: Collection[int] = (0,),
) -> None:
    """Print a rich table to stdout: columns numbered in `left` align left, the rest (figures) right.

    Wide enough not to wrap figures when stdout is a file or pipe.
    """
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 200)
    table = Table(title=title, caption=caption or None, caption_justify="left", title_justify="left")
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i in left else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def write_json(path: Path, payload: Mapping[str, Any]) -> None:
    """Write `payload` as indented JSON ('-' means stdout)."""
    text = json.dumps(payload, indent=2, default=str)
    if str(path) == "-":
        print(text)
    else:
        Path(path).write_text(text + "\n")


def tool_version(cmd: Sequence[str]) -> str:
    """First line a tool prints for its version flag, or 'unknown'."""
    try:
        out = subprocess.run(list(cmd), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def timed(fn: Callable[[], Any], runs: int) -> float:
    """Median wall seconds of fn() over `runs` calls in this process (fn must wait for its own work)."""
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)
