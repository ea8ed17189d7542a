"""What a call costs through the warm service (issue 26), each an `oxi` command from a shell, against oiiotool.

    python bench/bench_service.py [--runs 5] [--sizes tiny,hd,4k,8k] [--sections calls,auto,xargs,loop,client]
                                  [--health N] [--versus FOLDER] [--out DIR]

Every figure is the median wall time of whole commands (the client's start included), second and later calls:
the service is started and each job run once before timing. Sections:
  calls   per call at each size: oiiotool (all threads), oxi in a process of its own (OXI_SERVER=off), oxi served.
  auto    --backend cpu, gpu and auto through the service on the jobs where a GPU should win (only with a
          hardware GPU): what auto picked and how it compares with the best forced backend.
  xargs   64 HD cdl calls through `xargs -P 16`, served and not: wall time and the peak memory of all oxi
          processes together (sampled), against the service's budget.
  loop    a 10-frame shell loop of 4K cdl calls against one batch call over the same frames.
  client  the client's own cost: `oxi --version` served, against the interpreter's start.
  versus  with --versus FOLDER (another checkout of oxi, e.g. `git worktree add /tmp/base main`): `oxi --version`, 64x48
          and HD cdl served by this tree's and by that tree's service, interleaved call by call, so that a busy
          machine weighs on both alike; each tree's bin/oxi run as the launcher runs it (python -S). Keep both
          trees on one filesystem (e.g. both `git archive | tar -x` under /tmp): the client reads its tree's
          files on every call, and two filesystems differed by 5 ms a call here.
  --health N: N 64x48 cdl calls in a row through the service; its memory before and after.
Results go to DIR/bench_service.json as well as the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import fmt_ratio, fmt_s, oiiotool_command, print_table, ratio, write_json  # noqa: E402
from bench.bench_cpu import oxi_command  # noqa: E402
from bench.bench_many_core import make_cube  # noqa: E402

SIZES = {"tiny": (64, 48), "hd": (1920, 1080), "4k": (4096, 2160), "8k": (8192, 4320)}
CONFIG = "ocio://studio-config-latest"
SDR = ("sRGB - Display", "ACES 2.0 - SDR 100 nits (Rec.709)")
SLOPE = "1.1,1.0,0.9"
# (size, job) -> the target for served / oiiotool
TARGETS = {("tiny", "cdl"): 1.0, ("hd", "cdl"): 0.6, ("hd", "resize"): 0.6, ("4k", "cdl"): 0.5,
           ("4k", "resize"): 0.5, ("4k", "display"): 0.5}


def make_plate(path: Path, width: int, height: int) -> Path:
    import OpenEXR

    if path.exists():
        return path
    rng = np.random.default_rng(5)
    x = (np.arange(width, dtype=np.float32) / width)[None, :]
    y = (np.arange(height, dtype=np.float32) / height)[:, None]
    rgba = {"R": (x * 2 - 0.2 + y).astype(np.float16), "G": np.sin(x * 30 + y * 9).astype(np.float16),
            "B": (rng.random((height, width), np.float32) * 3).astype(np.float16),
            "A": np.ones((height, width), np.float16)}
    tmp = path.with_suffix(".tmp.exr")
    OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}, rgba).write(str(tmp))
    tmp.replace(path)
    return path


def jobs(src: Path, out: Path, oxi: list[str], oiio: list[str] | None) -> dict[str, tuple[list[str], list[str] | None]]:
    """name -> (oxi command, oiiotool command): the same work in each tool's words."""
    o = [*oiio, str(src)] if oiio else None
    return {
        "cdl": ([*oxi, "cdl", str(src), str(out), "--slope", SLOPE],
                [*o, "--mulc", f"{SLOPE},1", "-o", str(out)] if o else None),
        "resize": ([*oxi, "resize", str(src), str(out), "--scale", "50%"],
                   [*o, "--resize", "50%", "-o", str(out)] if o else None),
        "display": ([*oxi, "display", str(src), str(out), "--from", "ACEScg", "--display", SDR[0], "--view", SDR[1],
                     "--config", CONFIG],
                    [*oiio, "--colorconfig", CONFIG, str(src), "--iscolorspace", "ACEScg", "--ociodisplay", *SDR,
                     "-o", str(out)] if oiio else None),
    }


def timed_runs(cmd: list[str], runs: int, env: dict[str, str]) -> float:
    """Median wall seconds of `cmd` over `runs` runs after one untimed run (the second and later calls)."""
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def env_with(**extra: str) -> dict[str, str]:
    """The environment every timed command runs in: each repeats into the same output (OXI_OVERWRITE), on the
    CPU's kernels, never their stand-ins (a cold one compiles in the untimed first run)."""
    return {"OXI_WAIT_FOR_KERNELS": "1", **os.environ, "COLUMNS": "200", "OXI_OVERWRITE": "1", **extra}


def service_status(oxi: list[str]) -> dict[str, Any]:
    done = subprocess.run([*oxi, "server", "status", "--json"], capture_output=True, text=True, env=env_with())
    return json.loads(done.stdout)


# --- sections -------------------------------------------------------------------------------------------------


def calls(args: argparse.Namespace, oxi: list[str], oiio: list[str] | None, work: Path) -> list[dict[str, Any]]:
    rows = []
    for size in args.sizes:
        width, height = SIZES[size]
        src = make_plate(work / f"plate_{size}.exr", width, height)
        for name, (cmd, oiio_cmd) in jobs(src, work / f"out_{size}.exr", oxi, oiio).items():
            if (size, name) not in TARGETS and not (size == "8k" and name == "cdl"):
                continue
            row = {"size": size, "job": name, "target": TARGETS.get((size, name))}
            row["oiiotool"] = timed_runs(oiio_cmd, args.runs, env_with()) if oiio_cmd else None
            row["own process"] = timed_runs(cmd, args.runs, env_with(OXI_SERVER="off"))
            row["served"] = timed_runs(cmd, args.runs, env_with(OXI_SERVER="on"))
            row["served/oiiotool"] = ratio(row["served"], row["oiiotool"])
            row["served/own"] = ratio(row["served"], row["own process"])
            row["inside"] = job_stages([*cmd, "--json"], env_with(OXI_SERVER="on"))
            rows.append(row)
            print(f"  {size} {name}: {row}", file=sys.stderr)
    print_table(
        "Per call, each an oxi command (median of runs, second and later calls); the served job's own stages",
        ["size", "job", "oiiotool s", "own process s", "served s", "served / oiiotool", "target", "served / own",
         "job s (read, compute, write)"],
        [[r["size"], r["job"], fmt_s(r["oiiotool"]), fmt_s(r["own process"]), fmt_s(r["served"]),
          fmt_ratio(r["served/oiiotool"]), fmt_ratio(r["target"]), fmt_ratio(r["served/own"]), r["inside"]]
         for r in rows],
        left=(0, 1, 8),
    )
    return rows


def job_stages(cmd: list[str], env: dict[str, str]) -> str:
    """What one served run's --json record says the job itself took: its seconds and stages."""
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    record = json.loads(done.stdout.splitlines()[-1])
    stages = record.get("stages") or {}
    parts = ", ".join(f"{stages[k]:.3f}" for k in ("read", "compute", "write") if k in stages)
    return f"{record.get('seconds', 0):.3f} ({parts})"


def auto(args: argparse.Namespace, oxi: list[str], work: Path) -> list[dict[str, Any]]:
    """Jobs where a warm GPU should beat the CPU: 4K ACES 2.0 view, 8K blur sigma 20, the issue's chain."""
    src4k = make_plate(work / "plate_4k.exr", *SIZES["4k"])
    src8k = make_plate(work / "plate_8k.exr", *SIZES["8k"])
    cube = work / "look65.cube"
    make_cube(cube)
    cases = {
        "4K ACES 2.0 display": jobs(src4k, work / "auto.exr", oxi, None)["display"][0],
        "8K blur sigma 20": [*oxi, "blur", str(src8k), str(work / "auto.exr"), "--sigma", "20"],
        "8K chain -> 4K": [*oxi, "run", str(src8k), str(work / "auto.exr"), "--cdl", f"slope={SLOPE}",
                           "--lut3d", str(cube), "--blur", "5", "--resize", "4096x2160"],
    }
    rows = []
    env = env_with(OXI_SERVER="on")
    for name, cmd in cases.items():
        row: dict[str, Any] = {"job": name}
        for backend in ("cpu", "gpu", "auto"):
            row[backend] = timed_runs([*cmd, "--backend", backend], args.runs, env)
        picked = subprocess.run([*cmd, "--json"], env=env, capture_output=True, text=True, check=True).stdout
        row["auto picked"] = json.loads(picked.splitlines()[-1]).get("backend")
        row["auto/best"] = ratio(row["auto"], min(row["cpu"], row["gpu"]))
        row["cpu/gpu"] = ratio(row["cpu"], row["gpu"])
        rows.append(row)
        print(f"  {name}: {row}", file=sys.stderr)
    print_table(
        "auto through the service (targets: picks the GPU where faster, then >= 1.5x the served CPU; auto/best <= 1.1)",
        ["job", "cpu s", "gpu s", "auto s", "auto picked", "auto / best", "served CPU / GPU"],
        [[r["job"], fmt_s(r["cpu"]), fmt_s(r["gpu"]), fmt_s(r["auto"]), str(r["auto picked"]),
          fmt_ratio(r["auto/best"]), fmt_ratio(r["cpu/gpu"])] for r in rows],
    )
    return rows


class MemorySampler:
    """The summed RSS of every process whose command line names oxi, sampled every 20 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            total = 0
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if b"oxi" not in cmdline or b"bench_service" in cmdline:
                        continue
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
                except (OSError, ValueError):
                    continue
            self.peak = max(self.peak, total)
            time.sleep(0.02)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def xargs(args: argparse.Namespace, oxi: list[str], work: Path) -> dict[str, Any]:
    src = make_plate(work / "plate_hd.exr", *SIZES["hd"])
    folder = work / "xargs"
    folder.mkdir(exist_ok=True)
    lines = "\n".join(f"{src} {folder / f'o{i}.exr'}" for i in range(64)) + "\n"
    script = f"xargs -P 16 -L 1 {' '.join(oxi)} cdl --slope {SLOPE}"
    found: dict[str, Any] = {"calls": 64, "parallel": 16}
    for mode in ("off", "on"):
        subprocess.run(["bash", "-c", script], input=lines, text=True, env=env_with(OXI_SERVER=mode), check=True,
                       capture_output=True)  # warm: the service's workers exist, caches are hot
        with MemorySampler() as sampler:
            t0 = time.perf_counter()
            subprocess.run(["bash", "-c", script], input=lines, text=True, env=env_with(OXI_SERVER=mode),
                           check=True, capture_output=True)
            found[f"{mode} s"] = time.perf_counter() - t0
        found[f"{mode} peak MiB"] = sampler.peak / 2**20
    found["speed-up"] = ratio(found["off s"], found["on s"])
    found["budget MiB"] = service_status(oxi).get("budget_bytes", 0) / 2**20
    print_table("64 HD cdl calls through xargs -P 16 (target: served >= 4x faster; peak <= the service's budget)",
                ["", "OXI_SERVER=off", "served"],
                [["wall s", fmt_s(found["off s"]), fmt_s(found["on s"])],
                 ["peak memory of all oxi processes, MiB", f"{found['off peak MiB']:.0f}",
                  f"{found['on peak MiB']:.0f}"],
                 ["speed-up", "", fmt_ratio(found["speed-up"])],
                 ["service budget, MiB", "", f"{found['budget MiB']:.0f}"]])
    return found


def loop(args: argparse.Namespace, oxi: list[str], work: Path) -> dict[str, Any]:
    frames = work / "frames"
    frames.mkdir(exist_ok=True)
    src = make_plate(work / "plate_4k.exr", *SIZES["4k"])
    for i in range(1001, 1011):
        target = frames / f"plate.{i}.exr"
        if not target.exists():
            os.link(src, target) if hasattr(os, "link") else target.write_bytes(src.read_bytes())
    out = work / "loop_out"
    out.mkdir(exist_ok=True)
    shell = (f"for f in {frames}/plate.*.exr; do {' '.join(oxi)} cdl \"$f\" {out}/$(basename \"$f\") "
             f"--slope {SLOPE}; done")
    batch = [*oxi, "cdl", str(frames), "-o", str(out), "--slope", SLOPE]
    found: dict[str, Any] = {}
    for mode in ("off", "on"):
        env = env_with(OXI_SERVER=mode)
        found[f"loop {mode}"] = timed_runs(["bash", "-c", shell], max(1, args.runs // 2), env)
        found[f"batch {mode}"] = timed_runs(batch, max(1, args.runs // 2), env)
    found["served loop / batch"] = ratio(found["loop on"], found["batch on"])
    print_table("A 10-frame shell loop of 4K cdl calls against one batch call (target: served loop <= 1.2x batch)",
                ["", "OXI_SERVER=off", "served"],
                [["shell loop s", fmt_s(found["loop off"]), fmt_s(found["loop on"])],
                 ["one batch call s", fmt_s(found["batch off"]), fmt_s(found["batch on"])],
                 ["loop / batch", fmt_ratio(ratio(found["loop off"], found["batch off"])),
                  fmt_ratio(found["served loop / batch"])]])
    return found


def client(args: argparse.Namespace, oxi: list[str]) -> dict[str, Any]:
    found = {
        "python -c pass": timed_runs([sys.executable, "-c", "pass"], args.runs * 2, env_with()),
        "python -S -c pass": timed_runs([sys.executable, "-S", "-c", "pass"], args.runs * 2, env_with()),
        "oxi --version, served": timed_runs([*oxi, "--version"], args.runs * 2, env_with(OXI_SERVER="on")),
        "oxi --version, own process": timed_runs([*oxi, "--version"], args.runs * 2, env_with(OXI_SERVER="off")),
    }
    print_table("The client's own cost (a served call of a job that does nothing)", ["", "s"],
                [[k, f"{v:.3f}"] for k, v in found.items()])
    return found


def versus(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    trees = {"this tree": Path(__file__).resolve().parent.parent, "versus": args.versus.resolve()}
    oxi = {name: [sys.executable, "-S", str(tree / "bin" / "oxi")] for name, tree in trees.items()}
    env = {name: env_with(OXI_SERVER="on", PYTHONPATH=str(tree)) for name, tree in trees.items()}
    out = work / "versus.exr"
    calls = {"--version": ["--version"]}
    for size in ("tiny", "hd"):
        src = make_plate(work / f"plate_{size}.exr", *SIZES[size])
        calls[f"{size} cdl"] = ["cdl", str(src), str(out), "--slope", SLOPE]
    samples: dict[tuple[str, str], list[float]] = {(t, c): [] for t in trees for c in calls}
    for name in trees:
        subprocess.run([*oxi[name], "server", "start"], env=env[name], check=True, capture_output=True)
        for call in calls.values():  # each job once untimed: the second and later calls are timed
            subprocess.run([*oxi[name], *call], env=env[name], check=True, capture_output=True)
    for i in range(args.runs * 4):
        for call_name, call in calls.items():
            for name in (list(trees) if i % 2 else list(trees)[::-1]):
                t0 = time.perf_counter()
                subprocess.run([*oxi[name], *call], env=env[name], check=True, capture_output=True)
                samples[(name, call_name)].append(time.perf_counter() - t0)
    for name in trees:
        subprocess.run([*oxi[name], "server", "stop"], env=env[name], capture_output=True)
    rows = [{"call": c, **{t: statistics.median(samples[(t, c)]) for t in trees}} for c in calls]
    for row in rows:
        row["this / versus"] = ratio(row["this tree"], row["versus"])
    print_table(f"Served calls, this tree against {trees['versus']} (median of {args.runs * 4}, interleaved)",
                ["call", "this tree s", "versus s", "this / versus"],
                [[r["call"], f"{r['this tree']:.4f}", f"{r['versus']:.4f}", fmt_ratio(r["this / versus"])]
                 for r in rows], left=(0,))
    return rows


def health(n: int, oxi: list[str], work: Path) -> dict[str, Any]:
    """N tiny calls in a row; the service's memory before and after, by process: the dispatcher, and each worker
    that served from before the first call to after the last (a worker forked meanwhile is a new process whose
    size the sum gains, not growth)."""
    src = make_plate(work / "plate_tiny.exr", *SIZES["tiny"])
    env = env_with(OXI_SERVER="on")
    cmd = [*oxi, "cdl", str(src), str(work / "health.exr"), "--slope", SLOPE]
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    before = service_status(oxi)
    t0 = time.perf_counter()
    for i in range(n):
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        if i and i % 1000 == 0:
            print(f"  {i} jobs, service memory {service_status(oxi)['memory_bytes'] / 2**20:.0f} MiB", file=sys.stderr)
    after = service_status(oxi)
    mib = 2.0**-20
    kept = sorted(set(before["worker_memory_bytes"]) & set(after["worker_memory_bytes"]))
    worker_growth = [(after["worker_memory_bytes"][p] - before["worker_memory_bytes"][p]) * mib for p in kept]
    found = {"jobs": n, "seconds": time.perf_counter() - t0, "memory before MiB": before["memory_bytes"] * mib,
             "memory after MiB": after["memory_bytes"] * mib, "workers before": before["workers"],
             "workers after": after["workers"],
             "dispatcher growth MiB": (after["dispatcher_memory_bytes"] - before["dispatcher_memory_bytes"]) * mib,
             "workers serving throughout": len(kept),
             "their largest growth MiB": max(worker_growth, default=0.0)}
    found["growth MiB"] = found["dispatcher growth MiB"] + found["their largest growth MiB"]
    print_table(f"{n} 64x48 cdl calls in a row through the service (target: memory within 50 MB)", ["", ""],
                [[k, f"{v:.1f}" if isinstance(v, float) else str(v)] for k, v in found.items()])
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--sizes", default="tiny,hd,4k,8k")
    p.add_argument("--sections", default="client,calls,auto,xargs,loop")
    p.add_argument("--health", type=int, default=0)
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "oxi-bench-service")
    p.add_argument("--out", type=Path, default=None, help="folder for bench_service.json")
    p.add_argument("--oxi", help="oxi command line (default: the `oxi` script beside this interpreter)")
    p.add_argument("--versus", type=Path, help="another checkout of oxi, for the versus section")
    args = p.parse_args(argv)
    args.sizes = [s for s in args.sizes.split(",") if s]
    sections = [s for s in args.sections.split(",") if s]
    args.work.mkdir(parents=True, exist_ok=True)
    oxi = oxi_command(args.oxi)
    if oxi is None:
        raise SystemExit("oxi does not run")
    oiio = oiiotool_command()
    subprocess.run([*oxi, "server", "start"], env=env_with(), check=True, capture_output=True)
    results: dict[str, Any] = {"cpu_count": os.cpu_count(), "oiiotool": oiio}
    if "client" in sections:
        results["client"] = client(args, oxi)
    if "calls" in sections:
        results["calls"] = calls(args, oxi, oiio, args.work)
    if "auto" in sections:
        from oxi_cli.backends.select import auto_choice

        if auto_choice().kind == "gpu":
            results["auto"] = auto(args, oxi, args.work)
        else:
            print("auto: no hardware GPU here; skipped", file=sys.stderr)
    if "xargs" in sections:
        results["xargs"] = xargs(args, oxi, args.work)
    if "loop" in sections:
        results["loop"] = loop(args, oxi, args.work)
    if "versus" in sections and args.versus is not None:
        results["versus"] = versus(args, args.work)
    if args.health:
        results["health"] = health(args.health, oxi, args.work)
    results["service"] = service_status(oxi)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / "bench_service.json", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
