"""The first run of each op on a machine (empty kernel cache) against the second (warm), file to file, HD half EXR.

    python bench/bench_first_run.py [--runs 3] [--backend cpu|auto|gpu] [--ops cdl,display] [--threads N]
                                    [--workdir DIR] [--out DIR] [--no-compile-all]

Issue 27: a user's first `oxi cdl` on a machine used to wait seconds for Numba (the first ACES 2.0 display half a
minute). Each run gives the command a new, empty cache (XDG_CACHE_HOME a new folder, OXI_KERNEL_CACHE and
NUMBA_CACHE_DIR unset), times its first call as a fresh process, waits for any compile it left running in the
background, then times the same command again (warm). Medians over --runs. Then the compile-everything command
(`oxi probe --compile`) from an empty cache. The plate is 1920x1080 RGBA half ZIP, made once in --workdir.
Targets are those of the issue for this box's size (up to 4 cores: the 2-core box's; more: the H100 box's).
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402  (the repo root must be importable first)
    BenchError,
    compile_oxi_bytecode,
    fmt_s,
    print_table,
    run_capturing,
    write_json,
)
from bench.bench_cpu import oxi_command  # noqa: E402
from examples.make_examples import GRADE, look_table, render_plate, write_cube, write_exr  # noqa: E402

WIDTH, HEIGHT = 1920, 1080
SOURCE, DISPLAY, VIEW = "ACEScg", "sRGB - Display", "ACES 2.0 - SDR 100 nits (Rec.709)"
OPS = ("cdl", "lut3d", "matrix", "resize", "blur", "colorspace", "display")
# Rec.709 -> ACEScg (Bradford), row-major, as bench_cpu.py.
MATRIX = "0.6130974024,0.3395231462,0.0473794514,0,0.0701937225,0.9163538791,0.0134523985,0," \
         "0.0206155929,0.1095697729,0.8698146342,0,0,0,0,1"
# Environment that would point a run at a cache other than the empty one it is given, or change what a cold run does.
CACHE_VARIABLES = ("OXI_KERNEL_CACHE", "NUMBA_CACHE_DIR", "OXI_BACKEND", "OXI_WAIT_FOR_KERNELS")


@dataclass(frozen=True)
class Targets:
    """The issue's first-run limits, in seconds, for a box of this size; None where it sets none."""

    simple: float
    display_auto: float
    display_cpu: float | None
    compile_all: float
    box: str

    def first(self, op: str, backend: str) -> float | None:
        if op != "display":
            return self.simple
        return self.display_cpu if backend == "cpu" else self.display_auto


def targets(cores: int) -> Targets:
    if cores <= 4:
        return Targets(1.5, 3.0, None, 60.0, "2-core box")
    return Targets(2.0, 3.0, 6.0, 20.0, "H100 box (16 cores)")


def make_inputs(workdir: Path) -> dict[str, Path]:
    workdir.mkdir(parents=True, exist_ok=True)
    plate = workdir / f"plate_{WIDTH}x{HEIGHT}_half_zip.exr"
    if not plate.exists():
        print(f"making {plate.name} …", file=sys.stderr)
        planes = render_plate(WIDTH, HEIGHT, grain=0.03)
        tmp = plate.with_suffix(".tmp.exr")
        write_exr(tmp, {name: planes[name] for name in "RGBA"})
        tmp.replace(plate)
    cube = workdir / "look33.cube"
    write_cube(cube, look_table(33), "oxi bench look")
    out = workdir / "out"
    out.mkdir(exist_ok=True)
    return {"plate": plate, "cube": cube, "out": out}


def commands(oxi: list[str], files: dict[str, Path], backend: str, threads: int | None) -> dict[str, list[str]]:
    tail = ["--backend", backend, *(["--threads", str(threads)] if threads else [])]

    def cmd(op: str, *args: str) -> list[str]:
        return [*oxi, op, str(files["plate"]), str(files["out"] / f"{op}.exr"), *args, *tail]

    triple = lambda v: ",".join(f"{x:.10g}" for x in v)  # noqa: E731
    return {
        "cdl": cmd("cdl", "--slope", triple(GRADE.slope), "--offset", triple(GRADE.offset),
                   "--power", triple(GRADE.power), "--sat", f"{GRADE.sat:.10g}"),
        "lut3d": cmd("lut3d", "--lut", str(files["cube"]), "--interp", "tetrahedral"),
        "matrix": cmd("matrix", "--matrix", MATRIX),
        "resize": cmd("resize", "--size", "1280x720", "--filter", "lanczos3"),
        "blur": cmd("blur", "--sigma", "2.25"),
        "colorspace": cmd("colorspace", "--from", SOURCE, "--to", "ACEScct"),
        "display": cmd("display", "--from", SOURCE, "--display", DISPLAY, "--view", VIEW),
    }


def fresh_env(cache: Path, wait: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CACHE_VARIABLES}
    env["XDG_CACHE_HOME"] = str(cache)
    env["OXI_WAIT_FOR_KERNELS"] = "1" if wait else "0"
    # Each run is a process of its own (a warm service would hide the first run's cost), replacing its last output.
    env["OXI_SERVER"] = "off"
    env["OXI_OVERWRITE"] = "1"
    return env


def wait_for_background(env: dict[str, str], limit_s: float = 900.0) -> float | None:
    """Seconds spent waiting for the compile a first run left in the background (None: this oxi has none)."""
    try:
        background = importlib.import_module("oxi_cli.kernel_cache")
    except ImportError:
        return None
    t0 = time.perf_counter()
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = env["XDG_CACHE_HOME"]
    for cached in (background.location, background.key, background.key_parts):
        cached.cache_clear()  # this run's own cache folder, for the sources as they are now
    try:
        background.wait_for_compiles(limit_s)
    finally:
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved
        background.location.cache_clear()
    return time.perf_counter() - t0


def timed_run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one run of `cmd` (a compile it left in the background is not its own) and what it
    printed on stderr. CPU seconds tell a slow run from a busy machine: the 2-core box is shared."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=900)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise BenchError(f"exit {done.returncode}: {' '.join(cmd)}\n  " + done.stderr.strip()[-1500:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return round(wall, 4), round(cpu, 4), done.stderr.strip()


def first_and_warm(cmd: list[str], runs: int, wait: bool) -> dict[str, Any]:
    firsts, warms, cpu_first, cpu_warm, waits, said = [], [], [], [], [], {"first": "", "warm": ""}
    for _ in range(runs):
        cache = Path(tempfile.mkdtemp(prefix="oxi-first-run-"))
        try:
            env = fresh_env(cache, wait)
            wall, cpu, said["first"] = timed_run(cmd, env)
            firsts.append(wall)
            cpu_first.append(cpu)
            waited = wait_for_background(env)
            if waited is not None:
                waits.append(round(waited, 3))
            wall, cpu, said["warm"] = timed_run(cmd, env)
            warms.append(wall)
            cpu_warm.append(cpu)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return {"cmd": cmd, "first_s": statistics.median(firsts), "warm_s": statistics.median(warms),
            "first_cpu_s": statistics.median(cpu_first), "warm_cpu_s": statistics.median(cpu_warm),
            "first_samples": firsts, "warm_samples": warms, "background_wait_s": waits, "stderr": said}


def compile_all(oxi: list[str]) -> dict[str, Any]:
    """`oxi probe --compile --json` from an empty cache: its wall time and what it reports."""
    import json

    cache = Path(tempfile.mkdtemp(prefix="oxi-compile-all-"))
    cmd = [*oxi, "probe", "--compile", "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        sample, printed = run_capturing(cmd, fresh_env(cache))
    except BenchError as exc:
        return {"cmd": cmd, "error": str(exc).splitlines()[0]}
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        report = json.loads(printed).get("compile", {})
    except ValueError:
        report = {}
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cmd": cmd, "wall_s": sample.wall_s, "cpu_s": round(cpu, 2), "peak_rss_mb": sample.peak_rss_mb,
            "report": report}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--backend", default="cpu", choices=("cpu", "auto", "gpu"))
    p.add_argument("--ops", default=",".join(OPS), help=f"comma-separated, of {', '.join(OPS)}")
    p.add_argument("--threads", type=int)
    p.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "oxi-bench-first-run")
    p.add_argument("--out", type=Path, help="folder for first_run.json")
    p.add_argument("--oxi", help="the oxi command line (default: the script beside this Python)")
    p.add_argument("--no-compile-all", action="store_true", help="skip timing `oxi probe --compile`")
    p.add_argument("--wait", action="store_true", help="first runs compile and wait (OXI_WAIT_FOR_KERNELS=1), as "
                   "before issue 27, instead of running on stand-ins")
    args = p.parse_args(argv)
    args.ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    unknown = [o for o in args.ops if o not in OPS]
    if unknown:
        p.error(f"unknown op(s) {', '.join(unknown)}; choose from {', '.join(OPS)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    oxi = oxi_command(args.oxi)
    if oxi is None:
        print("oxi cannot be run: pip install -e . first", file=sys.stderr)
        return 1
    compile_oxi_bytecode()
    files = make_inputs(args.workdir)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    goal = targets(cores)
    cases = commands(oxi, files, args.backend, args.threads)
    results: dict[str, Any] = {}
    for op in args.ops:
        try:
            results[op] = first_and_warm(cases[op], args.runs, args.wait)
        except BenchError as exc:
            results[op] = {"cmd": cases[op], "error": str(exc)}
            print(f"  {op:<11} FAILED\n{exc}", file=sys.stderr)
            continue
        r = results[op]
        print(f"  {op:<11} first {r['first_s']:6.2f} s  warm {r['warm_s']:5.2f} s", file=sys.stderr)
    everything = None if args.no_compile_all else compile_all(oxi)

    rows = []
    for op, r in results.items():
        limit = goal.first(op, args.backend)
        if "error" in r:
            rows.append([op, "failed", "", "", "", fmt_s(limit), "", ""])
            continue
        met = "–" if limit is None else ("yes" if r["first_s"] <= limit else "NO")
        wait = fmt_s(statistics.median(r["background_wait_s"])) if r["background_wait_s"] else "–"
        rows.append([op, fmt_s(r["first_s"]), fmt_s(r["warm_s"]), fmt_s(r["first_cpu_s"]), fmt_s(r["warm_cpu_s"]),
                     fmt_s(limit), met, wait])
    if everything is not None:
        wall = everything.get("wall_s")
        met = "–" if wall is None else ("yes" if wall <= goal.compile_all else "NO")
        cpu = everything.get("cpu_s")
        rows.append(["compile everything", fmt_s(wall) if wall is not None else "failed", "", fmt_s(cpu), "",
                     fmt_s(goal.compile_all), met, ""])
    mode = ", compile and wait" if args.wait else ""
    print_table(f"First run (empty cache) and warm, HD half EXR, --backend {args.backend}{mode}, {cores} cores",
                ["op", "first s", "warm s", "first CPU s", "warm CPU s", "target s", "met", "background compile s"],
                rows,
                caption=f"median of {args.runs}; targets: {goal.box}; first = a fresh process on an empty cache, "
                        "warm = the same command after it (and after any background compile)")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / "first_run.json", {
            "backend": args.backend, "wait": args.wait, "cores": cores, "runs": args.runs, "box": goal.box,
            "targets": goal.__dict__, "ops": results, "compile_all": everything,
        })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
