"""Benchmark batches on a Dask cluster against --jobs, one oxi process per frame and oiiotool per frame.

    python bench/bench_cluster.py [--frames 8] [--workers 2] [--runs 3] [--per-frame-runs 1] [--tiny 100]
                                  [--workdir DIR] [--json FILE]

Each frame is bench_cpu.py's 4096x2160 RGBA half ZIP plate through `oxi run --cdl grade.cc --lut3d look33.cube
--resize 1920x1080` (lanczos3). `--cluster local:N` starts its N worker processes inside the timed run;
"warm cluster" sends the batch to N workers started beforehand (tcp://), as a farm's long-lived workers are.
Per-task overhead: the extra wall time per file of a batch of `--tiny` copies of an 8x8 image over a batch
of one, on the warm cluster (and, for comparison, in one process with --jobs N).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402  (the repo root must be importable first)
    Measurement,
    compile_oxi_bytecode,
    fmt_mb,
    fmt_s,
    measure,
    oiiotool_command,
    print_table,
    run_once,
    write_json,
)
from bench.bench_batch import frames, loop  # noqa: E402
from bench.bench_cpu import make_inputs, oxi_command  # noqa: E402

SIZE = "1920x1080"


def tiny_frames(folder: Path, count: int) -> Path:
    """`count` copies of an 8x8 RGBA half EXR: the files cost nothing, so the time is the per-task overhead."""
    import numpy as np
    import OpenEXR

    folder.mkdir(parents=True, exist_ok=True)
    first = folder / "t.0001.exr"
    if not first.exists():
        pixels = np.full((8, 8, 4), 0.5, np.float16)
        OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION}, {"RGBA": pixels}).write(str(first))
    for i in range(2, count + 1):
        path = folder / f"t.{i:04d}.exr"
        if not path.exists():
            shutil.copyfile(first, path)
    return folder / "t.####.exr"


def per_task_ms(cmd: list[str], pattern: Path, out: Path, count: int, runs: int) -> float:
    """(batch of `count` copies - batch of 1) / (count - 1), in ms, medians of `runs`."""

    def clear() -> None:
        shutil.rmtree(out, ignore_errors=True)

    def batch(n: int) -> list[str]:
        return [*cmd, str(pattern), "-o", str(out / "t.####.exr"), "--frames", f"1-{n}", "--quiet"]

    one = measure(batch(1), runs, before_each=clear).median_s
    many = measure(batch(count), runs, before_each=clear).median_s
    return (many - one) / (count - 1) * 1000


def interleaved(cases: dict[str, list[str]], runs: int, clear: Any, slow: set[str], slow_runs: int
                ) -> dict[str, Measurement]:
    """Round-robin over the cases (run 1 of each, then run 2...), so that load from others on a shared box
    falls on every case alike rather than on whichever ran during it. `slow` cases run `slow_runs` times."""
    results = {name: Measurement(cmd=cmd) for name, cmd in cases.items()}
    for r in range(runs):
        for name, cmd in cases.items():
            if name in slow and r >= slow_runs:
                continue
            clear()
            results[name].samples.append(run_once(cmd))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=8)
    p.add_argument("--workers", type=int, default=2, help="cluster workers and --jobs")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--per-frame-runs", type=int, default=1, help="runs of the slow process-per-frame cases")
    p.add_argument("--tiny", type=int, default=100, help="files in the per-task overhead batch")
    p.add_argument("--workdir", type=Path, default=Path("/tmp/oxi-bench"))
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    os.environ["OXI_BACKEND"] = "cpu"  # this box's comparison; workers inherit it
    compile_oxi_bytecode()
    files = make_inputs(args.workdir)
    inputs = frames(files.plate, args.workdir / "cluster_in", args.frames)
    out = args.workdir / "cluster_out"
    oxi, oiio = oxi_command(None), oiiotool_command()
    if oxi is None:
        print("error: oxi does not run", file=sys.stderr)
        return 1
    n = args.workers
    chain = ["--cdl", str(files.cc), "--lut3d", str(files.cube), "--resize", SIZE]
    per_worker_threads = ["--threads", str(max(1, (os.cpu_count() or 1) // n))]

    def batch(*extra: str) -> list[str]:
        return [*oxi, "run", str(inputs[0].parent), "-o", str(out), *chain, "--quiet", *extra]

    def clear() -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)

    from oxi_cli.batch.cluster import local_cluster

    cluster = local_cluster(n, 4 << 30)
    try:
        warm = cluster.scheduler_address
        run_once(batch("--cluster", warm, *per_worker_threads))  # workers' Numba kernels loaded, not timed
        cases: dict[str, list[str]] = {
            f"oxi --jobs {n} (one process)": batch("--jobs", str(n)),
            f"oxi --cluster local:{n} (start-up included)": batch("--cluster", f"local:{n}"),
            f"oxi --cluster tcp:// (warm cluster, {n} workers)": batch("--cluster", warm, *per_worker_threads),
            "oxi, a process per frame": loop([[*oxi, "run", str(f), str(out / f.name), *chain] for f in inputs]),
        }
        if oiio is not None:
            cases["oiiotool, a process per frame"] = loop(
                [[*oiio, str(f), "--ociofiletransform", str(files.cc), "--ociofiletransform", str(files.cube),
                  "--resize:filter=lanczos3", SIZE, "-o", str(out / f.name)] for f in inputs])
        results = interleaved(cases, args.runs, clear, slow={"oxi, a process per frame",
                                                              "oiiotool, a process per frame"},
                              slow_runs=args.per_frame_runs)
        tiny = tiny_frames(args.workdir / "tiny_in", args.tiny)
        copy = [*oxi, "run"]
        overhead = {
            "warm cluster": per_task_ms([*copy, "--cluster", warm, *per_worker_threads], tiny,
                                        args.workdir / "tiny_out", args.tiny, args.runs),
            f"--jobs {n}": per_task_ms([*copy, "--jobs", str(n)], tiny, args.workdir / "tiny_out", args.tiny,
                                       args.runs),
        }
    finally:
        cluster.close()
    jobs = results[f"oxi --jobs {n} (one process)"].median_s
    per_frame = results["oxi, a process per frame"].median_s
    rows = [[name, fmt_s(m.median_s), fmt_s(m.median_s / args.frames), f"{m.median_s / jobs:.2f}",
             f"{per_frame / m.median_s:.2f}", fmt_mb(m.peak_rss_mb)] for name, m in results.items()]
    print_table(
        f"{args.frames} frames 4096x2160 RGBA half ZIP: cdl + lut3d 33³ + resize {SIZE}, "
        f"{os.cpu_count()} CPUs, median of {args.runs}",
        ["how", "wall s", "s per frame", f"time vs --jobs {n}", "speed-up vs a process per frame",
         "client peak MB"],
        rows,
        caption="targets: cluster time ≤ 1.1× --jobs; ≥ 2.5× faster than a process per frame",
    )
    overhead["warm cluster beyond --jobs"] = overhead["warm cluster"] - overhead[f"--jobs {n}"]
    print_table(f"per-task overhead: {args.tiny} copies of an 8x8 EXR vs one (target ≤ 20 ms)",
                ["where", "ms per file"], [[k, f"{v:.1f}"] for k, v in overhead.items()],
                caption="each copy's own read, write, fsync and rename are in both figures; the difference "
                        "is what the cluster adds")
    if args.json:
        write_json(args.json, {"frames": args.frames, "workers": n, "cpus": os.cpu_count(),
                               "results": {k: v.to_dict() for k, v in results.items()},
                               "overhead_ms": overhead, "elapsed_s": round(time.perf_counter() - t0, 1)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
