"""Benchmark a batch: N frames graded by one oxi process, by one oxi process per frame, and by oiiotool per frame.

    python bench/bench_batch.py [--frames 8] [--threads N] [--jobs 1,4] [--runs 3] [--workdir DIR] [--json FILE]

Each frame is bench_cpu.py's 4096x2160 RGBA half ZIP plate, graded with its .cc (OCIO CDL, noclamp). A
render farm or a shell loop starts one process per frame; oxi can take the whole folder instead, paying
its fixed start-up (interpreter, imports, Numba) once. The table gives the wall time per frame.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402  (the repo root must be importable first)
    compile_oxi_bytecode,
    fmt_mb,
    fmt_s,
    measure,
    oiiotool_command,
    print_table,
    run_once,
    write_json,
)
from bench.bench_cpu import make_inputs, oxi_command  # noqa: E402


def frames(plate: Path, folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"plate.{1001 + i}.exr" for i in range(count)]
    for path in paths:
        if not path.exists():
            shutil.copyfile(plate, path)
    return paths


def loop(commands: list[list[str]]) -> list[str]:
    """One shell command line running `commands` one after another (so one measurement times them all)."""
    import shlex

    return ["sh", "-c", " && ".join(shlex.join(c) for c in commands)]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=8)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--jobs", default="1,4", help="oxi --jobs values to time for the one-process batch")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--workdir", type=Path, default=Path("/tmp/oxi-bench"))
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    compile_oxi_bytecode()
    files = make_inputs(args.workdir)
    inputs = frames(files.plate, args.workdir / "batch_in", args.frames)
    out = args.workdir / "batch_out"
    out.mkdir(exist_ok=True)
    oxi = oxi_command(None)
    oiio = oiiotool_command()
    if oxi is None:
        print("error: oxi does not run", file=sys.stderr)
        return 1
    threads = ["--threads", str(args.threads)]
    grade = ["--cdl", str(files.cc), "--backend", "cpu", *threads]

    def clear() -> None:
        for path in out.glob("*.exr"):
            path.unlink()

    cases: dict[str, list[str]] = {}
    for jobs in [int(j) for j in args.jobs.split(",") if j]:
        cases[f"oxi, one process, --jobs {jobs}"] = [*oxi, "cdl", str(inputs[0].parent), "-o", str(out), *grade,
                                                     "--jobs", str(jobs), "--quiet"]
    cases["oxi, a process per frame"] = loop([[*oxi, "cdl", str(f), str(out / f.name), *grade] for f in inputs])
    if oiio is not None:
        cases["oiiotool, a process per frame"] = loop(
            [[*oiio, *threads, str(f), "--ociofiletransform", str(files.cc), "-o", str(out / f.name)] for f in inputs]
        )
    run_once([*oxi, "cdl", str(inputs[0]), str(out / "warm.exr"), *grade])  # Numba's cache, not timed
    results = {name: measure(cmd, args.runs, before_each=clear) for name, cmd in cases.items()}
    reference = results.get("oiiotool, a process per frame")
    rows = []
    for name, m in results.items():
        vs = f"{m.median_s / reference.median_s:.2f}" if reference else "–"
        rows.append([name, fmt_s(m.median_s), fmt_s(m.median_s / args.frames), fmt_mb(m.peak_rss_mb), vs])
    print_table(
        f"{args.frames} frames 4096x2160 RGBA half ZIP, CDL, --threads {args.threads}, median of {args.runs}",
        ["how", "wall s", "s per frame", "peak MB", "vs oiiotool"],
        rows,
    )
    if args.json:
        write_json(args.json, {"frames": args.frames, "threads": args.threads, "cpus": os.cpu_count(),
                               "results": {k: v.to_dict() for k, v in results.items()},
                               "elapsed_s": round(time.perf_counter() - t0, 1)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
