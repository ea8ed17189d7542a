"""The issue-36 targets on every registered backend, served: each job forced onto each backend and left to `auto`.

    python bench/bench_backends.py [--runs 5] [--jobs blur,display,chain,batch,cdl] [--out DIR]

Every figure is the median wall time of whole `oxi` commands through the warm service (the client's start
included), second and later calls, as bench_service.py times them. Jobs (8192x4320 RGBA half ZIP plates):
  blur     8K blur sigma 20
  display  8K ACES 2.0 SDR display (studio config)
  chain    8K --cdl --lut3d 65^3 --blur 5 --resize 4096x2160
  batch    16 4K frames of the ACES 2.0 display, one batch call
  cdl      8K cdl file to file, against oiiotool (all threads)
For each job: every backend's seconds, auto's and what it picked, the ratios the issue's targets name, and one
served run's own stages (--json: read, compute, write). Results go to DIR/bench_backends.json too.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import fmt_ratio, fmt_s, oiiotool_command, print_table, ratio, write_json  # noqa: E402
from bench.bench_cpu import oxi_command  # noqa: E402
from bench.bench_many_core import make_cube  # noqa: E402
from bench.bench_service import CONFIG, SDR, SIZES, SLOPE, env_with, job_stages, make_plate, timed_runs  # noqa: E402
from oxi_cli.backends import registry  # noqa: E402

FRAMES = 16


def cases(oxi: list[str], work: Path) -> dict[str, list[str]]:
    """job -> the oxi command (without --backend)."""
    src = make_plate(work / "plate_8k.exr", *SIZES["8k"])
    frames = work / "frames"
    frames.mkdir(exist_ok=True)
    one = make_plate(work / "plate_4k.exr", *SIZES["4k"])
    for i in range(FRAMES):
        link = frames / f"f.{1001 + i}.exr"
        if not link.exists():
            link.symlink_to(one)
    cube = work / "look65.cube"
    make_cube(cube)
    out = str(work / "out.exr")
    display = ["--from", "ACEScg", "--display", SDR[0], "--view", SDR[1], "--config", CONFIG]
    return {
        "blur": [*oxi, "blur", str(src), out, "--sigma", "20"],
        "display": [*oxi, "display", str(src), out, *display],
        "chain": [*oxi, "run", str(src), out, "--cdl", f"slope={SLOPE}", "--lut3d", str(cube), "--blur", "5",
                  "--resize", "4096x2160"],
        "batch": [*oxi, "display", str(frames), "-o", str(work / "batch_out"), *display],
        "cdl": [*oxi, "cdl", str(src), out, "--slope", SLOPE],
    }


def measure(name: str, cmd: list[str], runs: int, oiio: list[str] | None, work: Path) -> dict[str, Any]:
    env = env_with(OXI_SERVER="on")
    row: dict[str, Any] = {"job": name}
    for backend in [*registry.KINDS, "auto"]:
        try:
            row[backend] = timed_runs([*cmd, "--backend", backend], runs, env)
        except subprocess.CalledProcessError as exc:
            row[backend] = None
            print(f"  {name} --backend {backend} failed: {exc.stderr[-500:]!r}", file=sys.stderr)
        if name != "batch" and row[backend] is not None:
            row[f"{backend} stages"] = job_stages([*cmd, "--backend", backend, "--json"], env)
    done = subprocess.run([*cmd, "--json"], env=env, capture_output=True, text=True)
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    row["auto picked"] = sorted({r.get("backend") for r in records if r.get("backend")})
    forced = [row[b] for b in registry.KINDS if row.get(b)]
    row["auto/best"] = ratio(row["auto"], min(forced)) if forced and row["auto"] else None
    if name == "cdl" and oiio:
        src = work / "plate_8k.exr"
        row["oiiotool"] = timed_runs([*oiio, str(src), "--mulc", f"{SLOPE},1", "-o", str(work / "oiio.exr")], runs,
                                     env_with())
    print(f"  {name}: {row}", file=sys.stderr)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--jobs", default="blur,display,chain,batch,cdl")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "oxi-bench-backends")
    p.add_argument("--out", type=Path, default=None, help="folder for bench_backends.json")
    p.add_argument("--oxi", help="oxi command line (default: the `oxi` script beside this interpreter)")
    args = p.parse_args(argv)
    oxi = oxi_command(args.oxi)
    if oxi is None:
        print("no working oxi command", file=sys.stderr)
        return 1
    args.work.mkdir(parents=True, exist_ok=True)
    commands = cases(oxi, args.work)
    rows = [measure(job, commands[job], args.runs, oiiotool_command(), args.work) for job in args.jobs.split(",")]
    names = list(registry.KINDS)
    print_table(
        "Served, median of runs (second and later calls); targets: CUDA >= 1.5x wgpu and >= 2x the CPU (8K jobs), "
        ">= 2x the CPU (batch), cdl <= 0.15x oiiotool, auto / best <= 1.1",
        ["job", *(f"{n} s" for n in names), "auto s", "auto picked", "auto / best", "cpu / cuda", "gpu / cuda",
         "cuda / oiiotool"],
        [[r["job"], *(fmt_s(r.get(n)) for n in names), fmt_s(r.get("auto")), ",".join(map(str, r["auto picked"])),
          fmt_ratio(r["auto/best"]), fmt_ratio(ratio(r.get("cpu"), r.get("cuda"))),
          fmt_ratio(ratio(r.get("gpu"), r.get("cuda"))), fmt_ratio(ratio(r.get("cuda"), r.get("oiiotool")))]
         for r in rows],
    )
    print_table("One served run's own stages per backend: seconds (read, compute, write)",
                ["job", *names],
                [[r["job"], *(str(r.get(f"{n} stages", "")) for n in names)] for r in rows if r["job"] != "batch"],
                left=tuple(range(len(names) + 1)))
    if args.out:
        write_json(args.out / "bench_backends.json", {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
