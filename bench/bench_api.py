"""What one call of the Python API costs in a long-lived process (issue 28): apply() on an array, process() on a file.

    python bench/bench_api.py [--calls 1000] [--size 256] [--backends cpu,gpu] [--jobs cdl,display] [--out FILE]

Per job and backend, in this one process: the backend opened once (open_backend), one call to warm it (kernels
loaded or compiled, pipelines built), then `--calls` calls of apply() on a float32 (size, size, 3) array, each
timed: median and 90th percentile; the executor alone on the same array (run_chain: what apply() adds is the
difference); apply() on a 64x48 array (issue 26's tiny job's pixels). Beside them, on the
same machine, the issue-26 figure this is held to: a warm in-process file job (process() on a 64x48 half EXR,
written to disk, median of 50 after a warm one), and the figure issue 26 measured that way on the 16-core H100 box
(tiny: cdl CPU 0.026 s, GPU 0.035-0.042 s; ACES 2.0 display CPU 0.021-0.028 s, GPU 0.031-0.037 s). The GPU here
may be a software one (lavapipe): see `oxi probe`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# The CPU's kernels are timed, never their stand-ins: a cold one compiles in the untimed warm-up.
os.environ.setdefault("OXI_WAIT_FOR_KERNELS", "1")

import oxi_cli as oxi  # noqa: E402
from bench._common import print_table, write_json  # noqa: E402

CONFIG = "ocio://studio-config-latest"
JOBS: dict[str, Callable[[], oxi.Chain]] = {
    "cdl": lambda: oxi.Chain([oxi.Cdl(slope=(1.1, 1.0, 0.9), offset=0.01, power=1.2, sat=0.9)]),
    "display": lambda: oxi.Chain([oxi.Display("ACEScg", "sRGB - Display", "ACES 2.0 - SDR 100 nits (Rec.709)",
                                              config=CONFIG)]),
}
# Issue 26's warm in-process figures for a 64x48 file on the H100 box (seconds per call).
ISSUE_26 = {("cdl", "cpu"): "0.026", ("cdl", "gpu"): "0.035–0.042", ("display", "cpu"): "0.021–0.028",
            ("display", "gpu"): "0.031–0.037"}
FILE_RUNS = 50


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def time_calls(fn: Callable[[], Any], calls: int) -> list[float]:
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return samples


def hdr_array(size: int) -> np.ndarray:
    rng = np.random.default_rng(28)
    return (np.exp(rng.normal(0.0, 1.5, (size, size, 3))) * np.where(rng.random((size, size, 3)) < 0.1, -1, 1)
            ).astype(np.float32)


def executor_alone(pixels: np.ndarray, chain: oxi.Chain, backend: oxi.Backend) -> Callable[[], Any]:
    """The same job without the API: planes copied, the executor's run_chain, the result downloaded (what apply()
    adds beyond this is its own cost)."""
    from oxi_cli.execute import run_chain

    height, width, channels = pixels.shape
    ops = [op for op in chain._compiled().ops_for(width, height, False) if not op.is_identity()]
    device = backend._raw

    def run() -> None:
        planes = [pixels[..., c].copy() for c in range(channels)]
        device.download_planes(run_chain(device, planes, ops, False, adopt=True), np.float32)

    return run


def file_job(folder: Path, chain: oxi.Chain, backend: oxi.Backend) -> list[float]:
    """process() on a 64x48 half EXR, as issue 26's warm in-process figure: one warm call, then FILE_RUNS."""
    plate = folder / "tiny.exr"
    if not plate.exists():
        oxi.write(oxi.from_array(hdr_array(64)[:48].astype(np.float16)), plate)
    out = folder / "out.exr"

    def once() -> None:
        oxi.process(plate, out, chain, backend=backend, overwrite=True)

    once()
    return time_calls(once, FILE_RUNS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--backends", default="cpu,gpu")
    parser.add_argument("--jobs", default="cdl,display")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    args = parser.parse_args()

    pixels = hdr_array(args.size)
    small = np.ascontiguousarray(hdr_array(64)[:48])  # issue 26's tiny job: 64x48 pixels
    rows, doc = [], []
    with tempfile.TemporaryDirectory(prefix="oxi-bench-api-") as tmp:
        for kind in args.backends.split(","):
            try:
                backend = oxi.open_backend(kind)
            except oxi.BackendUnavailable as e:
                print(f"skipping {kind}: {e}", file=sys.stderr)
                continue
            for job in args.jobs.split(","):
                chain = JOBS[job]()
                t0 = time.perf_counter()
                oxi.apply(pixels, chain, backend=backend)
                first = time.perf_counter() - t0
                calls = time_calls(lambda chain=chain, backend=backend: oxi.apply(pixels, chain, backend=backend),
                                   args.calls)
                tiny = time_calls(lambda chain=chain, backend=backend: oxi.apply(small, chain, backend=backend),
                                  args.calls)
                bare = time_calls(executor_alone(pixels, chain, backend), args.calls)
                files = file_job(Path(tmp), chain, backend)
                entry = {"job": job, "backend": kind, "device": backend.device, "size": args.size,
                         "calls": args.calls, "first_s": first, "apply_median_s": statistics.median(calls),
                         "apply_p90_s": percentile(calls, 0.9), "executor_median_s": statistics.median(bare),
                         "apply_64x48_median_s": statistics.median(tiny),
                         "apply_64x48_p90_s": percentile(tiny, 0.9), "file_median_s": statistics.median(files),
                         "file_p90_s": percentile(files, 0.9), "issue_26_s": ISSUE_26[(job, kind)]}
                doc.append(entry)
                rows.append([job, f"{kind}: {backend.device}", f"{first:.3f}", f"{entry['apply_median_s']:.4f}",
                             f"{entry['apply_p90_s']:.4f}", f"{entry['executor_median_s']:.4f}",
                             f"{entry['apply_64x48_median_s']:.4f}",
                             f"{entry['apply_64x48_p90_s']:.4f}", f"{entry['file_median_s']:.4f}",
                             f"{entry['file_p90_s']:.4f}", entry["issue_26_s"]])
    print_table(
        f"oxi.apply() per call, {args.calls} calls on a {args.size}x{args.size}x3 float32 array in one process "
        "(seconds)",
        ["job", "backend", "first call", "apply median", "apply p90", "executor alone", "apply 64x48 median",
         "64x48 p90",
         "64x48 file median", "file p90",
         "issue 26 (H100 box, file)"],
        rows,
        caption="first call: kernels loaded or compiled and pipelines built; executor alone: the same array through "
                "execute.run_chain without the API (median); file: process() on a 64x48 half EXR here, median and "
                f"p90 of {FILE_RUNS} after a warm one, the way issue 26 measured its figures",
        left=(0, 1),
    )
    if args.out is not None:
        write_json(args.out, {"results": doc})


if __name__ == "__main__":
    main()
