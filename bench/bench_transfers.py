"""Where a device job's time goes, in one process: upload, kernels and download of an 8K RGBA half plate on each
registered backend, each stage timed alone after a warm-up (best of runs).

    python bench/bench_transfers.py [--runs 5] [--size 8192x4320] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, write_json  # noqa: E402
from oxi_cli.backends import registry  # noqa: E402
from oxi_cli.ops import Blur, Cdl  # noqa: E402


def best(run: Callable[[], Any], finish: Callable[[], None], runs: int) -> float:
    run()
    finish()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        finish()
        times.append(time.perf_counter() - t0)
    return min(times)


def stages(name: str, width: int, height: int, runs: int) -> dict[str, Any]:
    backend = registry.kind(name).open(None, None)
    rng = np.random.default_rng(3)
    planes = [rng.random((height, width), np.float32).astype(np.float16) for _ in range(4)]
    handle = backend.upload(planes)
    out = backend.allocate(height, width, 4)
    cdl = [Cdl(slope=(1.1, 1.0, 0.9), offset=(0.01, 0.0, -0.01), power=(1.2, 1.0, 0.8), sat=0.9)]
    half_bytes = width * height * 4 * 2
    row: dict[str, Any] = {"backend": name, "device": backend.device_label}
    row["upload s"] = best(lambda: backend.upload(planes), backend.finish, runs)
    row["download s"] = best(lambda: backend.download_planes(handle, np.float16), backend.finish, runs)
    row["cdl s"] = best(lambda: backend.color_chain(handle, handle, cdl, True), backend.finish, runs)
    row["blur 20 s"] = best(lambda: backend.spatial(handle, out, Blur(20.0)), backend.finish, runs)
    row["upload GB/s"] = half_bytes / row["upload s"] / 1e9
    row["download GB/s"] = half_bytes / row["download s"] / 1e9
    print(f"  {row}", file=sys.stderr)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--size", default="8192x4320")
    p.add_argument("--backends", default=",".join(registry.KINDS))
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    rows = []
    for name in args.backends.split(","):
        try:
            rows.append(stages(name, width, height, args.runs))
        except Exception as exc:  # a backend that will not open here: the others still count
            print(f"  {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    keys = ["upload s", "download s", "cdl s", "blur 20 s", "upload GB/s", "download GB/s"]
    print_table(f"{args.size} RGBA half, in one process, best of {args.runs} (each stage alone, finished)",
                ["backend", "device", *keys], [[r["backend"], r["device"], *(f"{r[k]:.3f}" for k in keys)]
                                               for r in rows], left=(0, 1))
    if args.out:
        write_json(args.out / "bench_transfers.json", {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
