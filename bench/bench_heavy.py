"""Heavy jobs, where a GPU should win: 8K blur σ20, an 8K grade-look-blur-resize chain, and a batch of 4K frames.

    python bench/bench_heavy.py [--runs 3] [--frames 32] [--oiio-frames 32] [--threads N] [--workdir DIR]
                                [--json FILE]

Issue #9's targets: forced `--backend gpu` ≥ 2× faster than `--backend cpu` for the blur σ20 and the chain
(`oxi run IN OUT --cdl grade.cc --lut3d look65.cube --blur 5 --resize 4096x2160`), file to file, RGBA half ZIP;
for a batch of 4K frames through that chain in one oxi process, GPU throughput ≥ 1.5× the CPU's and ≥ 3× oiiotool
run four at a time (`xargs -P 4`, the usual farm-script way; oiiotool's chain: the grade as a CLF, the cube, a
21x21 Gaussian, a lanczos3 resize). Ratios are per frame and from one run of this script.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402
    compile_oxi_bytecode,
    fmt_ratio,
    fmt_s,
    measure,
    oiiotool_command,
    print_table,
    ratio,
    write_json,
)
from bench.bench_cpu import GRADE, oxi_command  # noqa: E402
from bench.bench_many_core import make_cube, make_plate, write_clf  # noqa: E402
from examples.make_examples import write_cc  # noqa: E402


def chain(cc: Path, cube: Path, size: str) -> list[str]:
    return ["--cdl", str(cc), "--lut3d", str(cube), "--blur", "5", "--resize", size]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--frames", type=int, default=32)
    p.add_argument("--oiio-frames", type=int, default=32, help="frames for oiiotool's xargs -P 4 batch (0: skip)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--big", default="8192x4320", help="the single-image size")
    p.add_argument("--small", default="4096x2160", help="the batch's frame size, and the chain's resize")
    p.add_argument("--workdir", type=Path, default=Path("/tmp/oxi-heavy"))
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    compile_oxi_bytecode()
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    (bw, bh), (sw, sh) = ([int(v) for v in size.split("x")] for size in (args.big, args.small))
    plate8, plate4 = work / f"plate_{args.big}.exr", work / f"plate_{args.small}.exr"
    make_plate(plate8, bw, bh)
    make_plate(plate4, sw, sh)
    cube, cc, clf = work / "look65.cube", work / "grade.cc", work / "grade.clf"
    make_cube(cube)
    write_cc(cc, GRADE)
    write_clf(clf)
    frames = work / "frames"
    frames.mkdir(exist_ok=True)
    for old in frames.glob("*.exr"):
        old.unlink()
    for i in range(args.frames):
        shutil.copyfile(plate4, frames / f"plate.{1001 + i}.exr")
    out = work / "out"
    oxi = oxi_command(None)
    if oxi is None:
        print("error: oxi does not run", file=sys.stderr)
        return 1
    threads = ["--threads", str(args.threads)]

    def clear() -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()

    clear()
    jobs = {
        f"blur σ20, {args.big}": ["blur", str(plate8), str(out / "b.exr"), "--sigma", "20"],
        f"chain, {args.big}": ["run", str(plate8), str(out / "c.exr"), *chain(cc, cube, args.small)],
        f"chain, {args.frames} frames {args.small}": ["run", str(frames), "-o", str(out),
                                                      *chain(cc, cube, args.small), "--quiet"],
    }
    results: dict[str, dict] = {}
    rows = []
    for name, job in jobs.items():
        per = {}
        for backend in ("cpu", "gpu", "auto"):
            cmd = [*oxi, *job, "--backend", backend, *threads]
            small = [str(plate4) if part in (str(plate8), str(frames)) else part for part in cmd]
            if "-o" in small:
                small[small.index("-o") + 1] = str(out / "warm.exr")
            measure(small, 1, before_each=clear)  # kernels compiled and cached, untimed
            per[backend] = measure(cmd, args.runs, before_each=clear)
        per_frame = args.frames if "frames" in name else 1
        cpu_s, gpu_s = per["cpu"].median_s / per_frame, per["gpu"].median_s / per_frame
        results[name] = {k: v.to_dict() for k, v in per.items()}
        best = min(per["cpu"].median_s, per["gpu"].median_s)
        rows.append([name, fmt_s(per["cpu"].median_s), fmt_s(per["gpu"].median_s), fmt_s(per["auto"].median_s),
                     fmt_s(cpu_s), fmt_s(gpu_s), fmt_ratio(ratio(cpu_s, gpu_s)),
                     fmt_ratio(ratio(per["auto"].median_s, best))])
    oiio = oiiotool_command()
    if oiio is not None and args.oiio_frames:
        names = sorted(frames.glob("*.exr"))[: args.oiio_frames]
        oiio_chain = ["--ociofiletransform", str(clf), "--ociofiletransform", str(cube), "--blur", "21x21",
                      "--resize:filter=lanczos3", args.small]
        line = (f"printf '%s\\n' {' '.join(shlex.quote(str(f)) for f in names)} | xargs -P 4 -I{{}} sh -c "
                + shlex.quote(f"{shlex.join(oiio)} --threads {max(1, args.threads // 4)} \"$1\" "
                              f"{shlex.join(oiio_chain)} -o {shlex.quote(str(out))}/$(basename \"$1\")")
                + " _ {}")
        m = measure(["sh", "-c", line], 1, before_each=clear)
        results["oiiotool xargs -P 4"] = m.to_dict()
        per_frame = m.median_s / len(names)
        gpu_frame = results[f"chain, {args.frames} frames {args.small}"]["gpu"]["median_s"] / args.frames
        rows.append([f"oiiotool, {len(names)} frames, xargs -P 4", "", "", "", fmt_s(per_frame), "",
                     f"{fmt_ratio(ratio(per_frame, gpu_frame))} (oiiotool / gpu)", ""])
    print_table(
        f"heavy jobs, RGBA half ZIP, --threads {args.threads}, median of {args.runs}",
        ["job", "cpu s", "gpu s", "auto s", "cpu s/frame", "gpu s/frame", "gpu speed-up", "auto/best"],
        rows,
        caption="targets: blur σ20 and 8K chain gpu ≥ 2×; batch gpu ≥ 1.5× cpu and ≥ 3× oiiotool xargs -P 4; "
                "auto ≤ 1.1× the faster forced backend",
    )
    if args.json:
        write_json(args.json, {"threads": args.threads, "cpus": os.cpu_count(), "frames": args.frames,
                               "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
