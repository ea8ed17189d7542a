"""Benchmark multi-op colour chains on the CPU against another revision: cold compile and warm `oxi run` wall.

    python bench/bench_chain.py [--against main] [--sizes 4096x2160,8192x4320] [--runs 3] [--cold-runs 1]
                                [--threads N] [--workdir DIR] [--json FILE]

Both revisions run in the same session, interleaved run by run (each first in turn), each from its own source tree
(`--against` is exported with `git archive`; 2abf1f2 is the last with the one-loop chain interpreter), so the
ratios hold on a noisy shared machine. Cold: a 3-op chain (cdl, matrix, lut3d) on a 256x256 half EXR with an empty
Numba cache (a fresh XDG_CACHE_HOME, see oxi_cli/jit.py), then the same command warm; compile ~ cold - warm. Warm:
`oxi run` on an RGBA half ZIP EXR of each size with chains of 1 (a control: the lone loop either way), 2, 3 and 5
ops; the table gives the median wall time and the compute stage from `--json`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import REPO, BenchError, fmt_ratio, fmt_s, print_table, ratio, write_json  # noqa: E402
from bench.bench_cpu import MATRIX, PLATE_GRAIN  # noqa: E402
from examples.make_examples import GRADE, look_table, render_plate, write_cc, write_cube, write_exr  # noqa: E402

SMALL = (256, 256)
# A second grade and a second matrix (not next to the first: neighbouring matrices would be fused).
GRADE2 = "slope=0.95,1.02,1.04 offset=0.01,0,-0.005 power=1.02,0.98,1 sat=1.05"
MATRIX2 = "1.05,-0.03,-0.02,-0.01,0.98,0.03,0.0,-0.04,1.04"


def chains(files: dict[str, Path]) -> dict[str, list[str]]:
    """`oxi run` op flags for each chain length (the 3-op chain is the one the cold run compiles)."""
    cdl, lut = ["--cdl", str(files["cc"])], ["--lut3d", str(files["cube"])]
    matrix = ["--matrix", ",".join(f"{v:.10g}" for v in MATRIX)]
    return {
        "1 op: cdl": cdl,
        "2 ops: cdl lut3d": [*cdl, *lut],
        "3 ops: cdl matrix lut3d": [*cdl, *matrix, *lut],
        "5 ops: cdl matrix lut3d cdl matrix": [*cdl, *matrix, *lut, "--cdl", GRADE2, "--matrix", MATRIX2],
    }


def parse_size(text: str) -> tuple[int, int]:
    w, h = text.lower().split("x")
    return int(w), int(h)


def make_inputs(workdir: Path, sizes: Sequence[tuple[int, int]]) -> dict[str, Path]:
    """RGBA half ZIP plates of each size and the small one, the LUT and the CDL (kept between runs)."""
    workdir.mkdir(parents=True, exist_ok=True)
    files = {"cube": workdir / "look33.cube", "cc": workdir / "grade.cc", "out": workdir / "out"}
    files["out"].mkdir(exist_ok=True)
    write_cube(files["cube"], look_table(33), "oxi bench look")
    write_cc(files["cc"], GRADE)
    for w, h in [SMALL, *sizes]:
        path = files[f"{w}x{h}"] = workdir / f"plate_{w}x{h}_rgba_half_zip.exr"
        if not path.exists():
            print(f"making {path.name} …", file=sys.stderr)
            planes = render_plate(w, h, grain=PLATE_GRAIN)
            tmp = path.with_suffix(".tmp.exr")
            write_exr(tmp, {name: planes[name] for name in "RGBA"})
            tmp.replace(path)
    return files


def export_tree(ref: str, into: Path) -> Path:
    """The revision's files (git archive), to run as that revision's oxi."""
    data = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True, check=True).stdout
    tar_path = into / "tree.tar"
    tar_path.write_bytes(data)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def run_oxi(tree: Path, args: Sequence[str], cache: Path) -> tuple[float, float | None]:
    """Wall seconds of one `oxi run` from `tree` with Numba's cache under `cache`, and its compute stage."""
    # A cold kernel compiles in the run that meets it (since issue 27 a run would otherwise go another way while a
    # background process compiles): the cold runs time the compile, the warm ones the kernels.
    env = {**os.environ, "PYTHONPATH": str(tree), "XDG_CACHE_HOME": str(cache), "OXI_WAIT_FOR_KERNELS": "1",
           "OXI_OVERWRITE": "1"}
    env.pop("NUMBA_CACHE_DIR", None)  # jit.py puts it under XDG_CACHE_HOME
    cmd = [sys.executable, "-m", "oxi_cli", "run", *args, "--backend", "cpu", "--json"]
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise BenchError(f"exit {out.returncode}: {' '.join(cmd)}\n{out.stderr.strip()[-2000:]}")
    return wall, _compute_seconds(out.stdout)


def _compute_seconds(stdout: str) -> float | None:
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        stages = record.get("stages") or record.get("timings") or {}
        if isinstance(stages, dict) and "compute" in stages:
            return float(stages["compute"])
    return None


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", default="main", help="git revision to compare with (default: main)")
    ap.add_argument("--sizes", default="4096x2160", help="plate sizes, comma-separated WxH")
    ap.add_argument("--runs", type=int, default=3, help="warm runs per command (median)")
    ap.add_argument("--cold-runs", type=int, default=1, help="cold-cache compiles per revision (median; 0: none)")
    ap.add_argument("--threads", type=int, default=None, help="oxi --threads (default: oxi's)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "oxi-bench-chain")
    ap.add_argument("--json", type=Path, default=None)
    opts = ap.parse_args(argv)

    sizes = [parse_size(s) for s in opts.sizes.split(",")]
    files = make_inputs(opts.workdir, sizes)
    threads = ["--threads", str(opts.threads)] if opts.threads else []
    flags = chains(files)
    cold_flags = flags["3 ops: cdl matrix lut3d"]
    payload: dict[str, object] = {"against": opts.against, "sizes": opts.sizes, "cpus": os.cpu_count()}

    with tempfile.TemporaryDirectory(prefix="oxi-bench-chain-") as tmp_name:
        tmp = Path(tmp_name)
        trees = {opts.against: export_tree(opts.against, tmp), "this tree": REPO}
        warm_caches = {name: tmp / f"cache-{i}" for i, name in enumerate(trees)}

        # Cold: a fresh cache each run; the same command again (warm) gives the part that is not compiling.
        small = files[f"{SMALL[0]}x{SMALL[1]}"]
        cold: dict[str, list[float]] = {name: [] for name in trees}
        warm_small: dict[str, list[float]] = {name: [] for name in trees}
        for k in range(opts.cold_runs):
            for name, tree in trees.items():
                cache = tmp / f"cold-{k}-{len(cold[name])}-{name.replace(' ', '_')}"
                args = [str(small), str(files["out"] / "small.exr"), *cold_flags, *threads]
                cold[name].append(run_oxi(tree, args, cache)[0])
                warm_small[name].append(run_oxi(tree, args, cache)[0])
                print(f"cold {name}: {cold[name][-1]:.2f} s (warm {warm_small[name][-1]:.2f} s)", file=sys.stderr)
        rows, records = [], []
        for name in trees if opts.cold_runs else ():
            c, w = statistics.median(cold[name]), statistics.median(warm_small[name])
            rows.append([name, fmt_s(c), fmt_s(w), fmt_s(c - w)])
            records.append({"tree": name, "cold_s": c, "warm_s": w, "compile_s": c - w})
        if records:
            print_table(
                f"Cold Numba cache, 3-op chain on {SMALL[0]}x{SMALL[1]} (median of {opts.cold_runs})",
                ["tree", "cold wall s", "warm wall s", "compile s (cold - warm)"], rows,
                caption=f"compile, this tree / {opts.against}: "
                f"{fmt_ratio(ratio(records[1]['compile_s'], records[0]['compile_s']))}",
            )
            payload["cold"] = records

        # Warm: each chain once untimed (its kernels into the tree's cache), then the trees interleaved run by run.
        warm_rows, warm_records = [], []
        for w, h in sizes:
            plate = files[f"{w}x{h}"]
            for chain, ops in flags.items():
                samples: dict[str, list[tuple[float, float | None]]] = {name: [] for name in trees}
                args = [str(plate), str(files["out"] / f"out_{w}x{h}.exr"), *ops, *threads]
                for name, tree in trees.items():  # untimed: the chain's kernels into this cache
                    run_oxi(tree, args, warm_caches[name])
                for k in range(opts.runs):
                    for name, tree in list(trees.items())[:: 1 if k % 2 else -1]:  # each goes first as often
                        samples[name].append(run_oxi(tree, args, warm_caches[name]))
                walls = {n: statistics.median(s[0] for s in v) for n, v in samples.items()}
                computes = {n: (statistics.median(c) if (c := [s[1] for s in v if s[1] is not None]) else None)
                            for n, v in samples.items()}
                b, t = opts.against, "this tree"
                warm_rows.append([f"{w}x{h}", chain, fmt_s(walls[b]), fmt_s(walls[t]),
                                  fmt_ratio(ratio(walls[t], walls[b])), fmt_s(computes[b]), fmt_s(computes[t]),
                                  fmt_ratio(ratio(computes[t], computes[b]))])
                warm_records.append({"size": f"{w}x{h}", "chain": chain, "wall_s": walls, "compute_s": computes})
        print_table(
            f"Warm `oxi run`, RGBA half ZIP EXR, median of {opts.runs} (seconds)",
            ["size", "chain", f"wall {opts.against}", "wall this", "ratio", f"compute {opts.against}",
             "compute this", "ratio"],
            warm_rows, left=(0, 1),
        )
        payload["warm"] = warm_records
    if opts.json:
        write_json(opts.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
