"""Benchmark oxi's colour management against oiiotool (OpenColorIO inside), file to file, on a 4096x2160 RGBA
half ZIP EXR with OCIO's built-in studio config.

    python bench/bench_color.py [--threads N] [--runs 3] [--workdir DIR] [--backend cpu] [--json FILE]

Jobs (issue 11): ACEScg -> ACEScct (EXR), ACEScg -> "sRGB - Texture" as 8-bit PNG, and the ACES 2.0 SDR
100 nits display view (EXR). The table shows median wall time, peak RSS, oxi / oiiotool and the goal.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402  (the repo root must be importable first)
    compile_oxi_bytecode,
    fmt_mb,
    fmt_ratio,
    fmt_s,
    measure,
    oiiotool_command,
    print_table,
    ratio,
    tool_version,
    write_json,
)
from bench.bench_cpu import make_inputs, oxi_command  # noqa: E402

CONFIG = "ocio://studio-config-latest"
SDR = ("sRGB - Display", "ACES 2.0 - SDR 100 nits (Rec.709)")
# name -> (goal as oxi / oiiotool, oxi arguments, oiiotool arguments, output extension)
JOBS = {
    "ACEScg -> ACEScct": (0.7, ["colorspace", "--from", "ACEScg", "--to", "ACEScct"],
                          ["--colorconvert", "ACEScg", "ACEScct"], ".exr"),
    "ACEScg -> sRGB - Texture, 8-bit PNG": (0.5, ["colorspace", "--from", "ACEScg", "--to", "sRGB - Texture",
                                                  "--out-type", "uint8"],
                                            ["--colorconvert", "ACEScg", "sRGB - Texture", "-d", "uint8"], ".png"),
    "ACES 2.0 SDR 100 nits display": (0.1, ["display", "--from", "ACEScg", "--display", SDR[0], "--view", SDR[1]],
                                      ["--iscolorspace", "ACEScg", "--ociodisplay", *SDR], ".exr"),
}


def commands(job: str, plate: Path, out: Path, oxi: list[str], oiio: list[str], threads: int,
             backend: str) -> dict[str, list[str]]:
    _, oxi_args, oiio_args, ext = JOBS[job]
    stem = job.split(",")[0].replace(" ", "_").replace(">", "").replace("-", "")
    return {
        "oxi": [*oxi, oxi_args[0], str(plate), str(out / f"oxi_{stem}{ext}"), *oxi_args[1:], "--config", CONFIG,
                "--threads", str(threads), "--backend", backend],
        "oiiotool": [*oiio, "--threads", str(threads), "--colorconfig", CONFIG, str(plate), *oiio_args,
                     "-o", str(out / f"oiio_{stem}{ext}")],
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads for both tools")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per tool and job (median reported)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "oxi-bench",
                        help="where the plate is cached and outputs written")
    parser.add_argument("--backend", default="cpu", help="oxi's --backend (cpu, gpu, auto)")
    parser.add_argument("--jobs", default="", help="substring filter on the job names")
    parser.add_argument("--oxi", help="oxi command line (default: `oxi` on PATH, else python -m oxi_cli)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON to this file ('-': stdout)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    oxi, oiio = oxi_command(args.oxi), oiiotool_command()
    if oxi is None or oiio is None:
        print("error: needs both oxi and oiiotool (pip install openimageio)", file=sys.stderr)
        return 2
    compile_oxi_bytecode()
    files = make_inputs(args.workdir)
    rows, figures = [], {}
    for job, (goal, *_rest) in JOBS.items():
        if args.jobs and args.jobs not in job:
            continue
        cmds = commands(job, files.plate, files.out, oxi, oiio, args.threads, args.backend)
        measure(cmds["oxi"], 1)  # compile or load kernels once, as a user's second run would find them
        got = {tool: measure(cmd, args.runs) for tool, cmd in cmds.items()}
        r = ratio(got["oxi"].median_s, got["oiiotool"].median_s)
        met = "yes" if r is not None and r <= goal else "no"
        rows.append([job, fmt_s(got["oxi"].median_s), fmt_mb(got["oxi"].peak_rss_mb), fmt_s(got["oiiotool"].median_s),
                     fmt_mb(got["oiiotool"].peak_rss_mb), fmt_ratio(r), f"<= {goal}", met])
        figures[job] = {tool: m.to_dict() for tool, m in got.items()} | {"ratio": r, "goal": goal}
    caption = (f"{args.threads} threads, median of {args.runs}, oxi --backend {args.backend}; "
               f"{tool_version([*oiio, '--version'])}; config {CONFIG}")
    print_table("oxi colour management vs oiiotool, 4096x2160 RGBA half ZIP EXR",
                ["job", "oxi s", "oxi MB", "oiiotool s", "oiiotool MB", "oxi/oiio", "goal", "met"], rows, caption)
    if args.json:
        write_json(args.json, {"threads": args.threads, "runs": args.runs, "jobs": figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
