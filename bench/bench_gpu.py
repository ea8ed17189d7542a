"""Benchmark the wgpu backend: transfers, kernels, the CPU backend in memory, and file->file against oiiotool.

    python bench/bench_gpu.py [--width 8192 --height 4320] [--device N] [--runs 3] [--ops cdl,blur20]
                              [--no-e2e] [--threads N] [--workdir DIR] [--json FILE|-]

In memory, on a WIDTHxHEIGHT RGBA float32 image: upload / download GB/s (float32 and half), each op's
kernel time and GB/s (bytes read + written once) against a device buffer-to-buffer copy measured in the
same run (the ceiling), and the same op on the CPU backend. End to end: `oxi OP IN OUT --backend gpu`,
`--backend cpu` and oiiotool (all threads) on a half ZIP EXR of that size, median wall time.
Targets (issue 3) are checked in the last column; a ✗ is a miss, not an error.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402
    BenchError,
    compile_oxi_bytecode,
    fmt_s,
    measure,
    oiiotool_command,
    print_table,
    ratio,
    run_once,
    timed,
    tool_version,
    write_json,
)
from bench.bench_cpu import MATRIX, oxi_command  # noqa: E402
from examples.make_examples import GRADE, look_table, render_plate, write_cube, write_exr  # noqa: E402
from oxi_cli.ops import Blur, Cdl, Lut3d, Matrix, Resize  # noqa: E402

GB = 1e9


@dataclass(frozen=True)
class MemCase:
    """One op timed in memory on both backends; `kernel_target` is a fraction of the copy rate."""

    key: str
    name: str
    method: str
    op: Any
    args: tuple = ()
    out_scale: float = 1.0  # output side / input side (resize)
    kernel_target: float | None = None
    speedup_target: float | None = None


def mem_cases(width: int, height: int) -> list[MemCase]:
    look33 = Lut3d(look_table(33))
    look65 = Lut3d(look_table(65))
    grade = Cdl(GRADE.slope, GRADE.offset, GRADE.power, GRADE.sat)
    return [
        MemCase("cdl", "cdl", "cdl", grade, kernel_target=0.5),
        MemCase("matrix", "matrix 4x4", "matrix", Matrix(MATRIX), (True,), kernel_target=0.5),
        MemCase("lut3d", "lut3d 33³ tetra", "lut3d", look33, kernel_target=0.5),
        MemCase("lut3d65", "lut3d 65³ tetra", "lut3d", look65, speedup_target=5.0),
        MemCase("chain", "cdl+matrix+lut3d 33³ fused", "color_chain", (grade, Matrix(MATRIX), look33), (True,)),
        MemCase("resize", f"lanczos3 → {width // 2}x{height // 2}", "resize",
                Resize(width // 2, height // 2, "lanczos3"), out_scale=0.5, speedup_target=5.0),
        MemCase("blur2", "blur σ2.25", "blur", Blur(2.25)),
        MemCase("blur5", "blur σ5.25", "blur", Blur(5.25)),
        MemCase("blur20", "blur σ20", "blur", Blur(20.0), speedup_target=5.0),
    ]


def in_memory(gpu: Any, cpu: Any | None, img: np.ndarray, cases: Sequence[MemCase], runs: int, reps: int) -> dict:
    """Transfers, copy ceiling, kernels and CPU times; every GPU figure waits for the GPU to finish."""
    nbytes = img.nbytes
    half = img.astype(np.float16)
    out32, out16 = np.empty_like(img), np.empty_like(half)
    h, w, c = img.shape
    src = gpu.upload(img)
    dst = gpu.allocate(h, w, c)
    gpu.download(src, out32)
    gpu.download(gpu.upload(half), out16)  # warm the half pipelines and staging buffers

    def copy() -> None:
        for _ in range(reps):
            enc = gpu.device.create_command_encoder()
            enc.copy_buffer_to_buffer(src.buffer, 0, dst.buffer, 0, nbytes)
            gpu.device.queue.submit([enc.finish()])
        gpu.finish()

    def upload(array: np.ndarray) -> None:
        gpu.upload(array)  # a new device buffer each time, as the executor gets it
        gpu.finish()

    copy()
    pool = gpu._ctx.pool
    limit, pool.limit = pool.limit, 0  # no reuse: every upload allocates, as a one-shot run does
    pool.clear()
    fresh = nbytes / timed(lambda: upload(img), runs) / GB
    pool.limit = limit
    upload(img)
    transfers = {
        "upload_f32_fresh_buffer": fresh,
        "upload_f32": nbytes / timed(lambda: upload(img), runs) / GB,
        "download_f32": nbytes / timed(lambda: gpu.download(src, out32), runs) / GB,
        "upload_f16": half.nbytes / timed(lambda: upload(half), runs) / GB,
        "download_f16": half.nbytes / timed(lambda: gpu.download(src, out16), runs) / GB,
        "copy": 2 * nbytes * reps / timed(copy, runs) / GB,
    }
    ops = []
    for case in cases:
        oh, ow = max(1, round(h * case.out_scale)), max(1, round(w * case.out_scale))
        out = src if case.method in ("cdl", "matrix", "lut3d", "color_chain") else gpu.allocate(oh, ow, c)

        def kernel(case: MemCase = case, out: Any = out) -> None:
            for _ in range(reps):
                if case.method in ("cdl", "matrix", "lut3d", "color_chain"):  # colour ops run as a chain
                    chain = case.op if isinstance(case.op, tuple) else (case.op,)
                    gpu.color_chain(src, out, chain, bool(case.args and case.args[0]))
                else:
                    gpu.spatial(src, out, case.op)
            gpu.finish()

        kernel()  # compiles the pipeline, uploads tables
        k_s = timed(kernel, runs) / reps
        moved = nbytes + oh * ow * c * 4  # read the input once, write the output once
        out_bytes = oh * ow * c * 4
        total_f32 = nbytes / (transfers["upload_f32"] * GB) + k_s + out_bytes / (transfers["download_f32"] * GB)
        gpu_total = nbytes / 2 / (transfers["upload_f16"] * GB) + k_s + out_bytes / 2 / (transfers["download_f16"] * GB)
        row = {"op": case.name, "kernel_s": k_s, "kernel_gbs": moved / k_s / GB,
               "of_copy": moved / k_s / GB / transfers["copy"], "gpu_total_f32_s": total_f32,
               "gpu_total_s": gpu_total, "kernel_target": case.kernel_target, "speedup_target": case.speedup_target}
        if cpu is not None:
            c_src = cpu.upload(img.copy())
            c_dst = c_src if out is src else cpu.allocate(oh, ow, c)
            getattr(cpu, case.method)(c_src, c_dst, case.op, *case.args)  # compile / warm
            run_cpu = getattr(cpu, case.method)
            row["cpu_s"] = timed(lambda f=run_cpu, s=c_src, d=c_dst, case=case: f(s, d, case.op, *case.args),
                                 max(1, runs - 1))
            row["speedup"] = row["cpu_s"] / gpu_total
        ops.append(row)
        print(f"  {case.name:<22} kernel {k_s * 1e3:8.2f} ms  {row['kernel_gbs']:8.1f} GB/s"
              + (f"  cpu {row['cpu_s']:.3f} s" if "cpu_s" in row else ""), file=sys.stderr)
    return {"transfers": transfers, "ops": ops}


# --- end to end ---------------------------------------------------------------------------------------------


def make_plate(workdir: Path, width: int, height: int) -> tuple[Path, Path]:
    workdir.mkdir(parents=True, exist_ok=True)
    plate = workdir / f"plate_{width}x{height}_half_zip.exr"
    if not plate.exists():
        print(f"making {plate.name} …", file=sys.stderr)
        planes = render_plate(width, height, grain=0.03)
        tmp = plate.with_suffix(".tmp.exr")
        write_exr(tmp, {name: planes[name] for name in "RGBA"})
        tmp.replace(plate)
    cube = workdir / "look65.cube"
    write_cube(cube, look_table(65), "oxi bench look 65")
    return plate, cube


def e2e_cases(plate: Path, cube: Path, out: Path, width: int, height: int, oiio: str | None,
              threads: int) -> list[tuple[str, list[str], list[str] | None, float]]:
    """(name, oxi args after IN OUT, oiiotool argv, target gpu/oiiotool ratio)."""
    trip = lambda v: ",".join(f"{x:.10g}" for x in v)  # noqa: E731
    o = [oiio, "--threads", str(threads), str(plate)] if oiio else None
    rw, rh = width // 2, height // 2
    cases = [
        ("copy", ["cdl", "--slope", "1"], [*o, "-o"] if o else None, 0.7),
        ("cdl", ["cdl", "--slope", trip(GRADE.slope), "--offset", trip(GRADE.offset), "--power", trip(GRADE.power),
                 "--sat", f"{GRADE.sat:.10g}"], None, 0.7),
        ("matrix", ["matrix", "--matrix", trip(MATRIX)],
         [*o, "--ccmatrix:transpose=1", trip(MATRIX), "-o"] if o else None, 0.7),
        ("lut3d 65³", ["lut3d", "--lut", str(cube)], [*o, "--ociofiletransform", str(cube), "-o"] if o else None, 0.7),
        (f"resize {rw}x{rh}", ["resize", "--size", f"{rw}x{rh}", "--filter", "lanczos3"],
         [*o, "--resize:filter=lanczos3", f"{rw}x{rh}", "-o"] if o else None, 0.7),
        ("blur 9x9 (σ2.25)", ["blur", "--sigma", "2.25"], [*o, "--blur", "9x9", "-o"] if o else None, 0.3),
        ("blur 21x21 (σ5.25)", ["blur", "--sigma", "5.25"], [*o, "--blur", "21x21", "-o"] if o else None, 0.3),
    ]
    if o:
        cc = out / "grade.cc"
        from examples.make_examples import write_cc

        write_cc(cc, GRADE)
        cases[1] = (cases[1][0], cases[1][1], [*o, "--ociofiletransform", str(cc), "-o"], cases[1][3])
    return cases


def end_to_end(oxi: list[str], plate: Path, cube: Path, workdir: Path, width: int, height: int, threads: int,
               runs: int, device: int | None) -> list[dict]:
    out = workdir / "out"
    out.mkdir(exist_ok=True)
    found = oiiotool_command()
    oiio = found[0] if found else None
    rows = []
    for name, args, oiio_argv, target in e2e_cases(plate, cube, out, width, height, oiio, threads):
        row: dict[str, Any] = {"op": name, "target_vs_oiiotool": target}
        for label, tail in (("gpu", ["--backend", "gpu", *(["--device", str(device)] if device is not None else [])]),
                            ("cpu", ["--backend", "cpu"])):
            dst = out / f"oxi_{label}.exr"
            argv = [*oxi, args[0], str(plate), str(dst), *args[1:], *tail, "--threads", str(threads)]
            try:
                run_once(argv)  # warm-up: Numba cache, driver shader cache
                row[label] = measure(argv, runs, before_each=lambda d=dst: d.unlink(missing_ok=True)).median_s
            except BenchError as exc:
                row[label] = None
                row[f"{label}_error"] = str(exc).splitlines()[0]
        if oiio_argv:
            dst = out / "oiio.exr"
            try:
                row["oiiotool"] = measure([*oiio_argv, str(dst)], runs,
                                          before_each=lambda d=dst: d.unlink(missing_ok=True)).median_s
            except BenchError as exc:
                row["oiiotool"], row["oiiotool_error"] = None, str(exc).splitlines()[0]
        rows.append(row)
        print(f"  {name:<22} gpu {fmt_s(row.get('gpu'))} s  cpu {fmt_s(row.get('cpu'))} s  "
              f"oiiotool {fmt_s(row.get('oiiotool'))} s", file=sys.stderr)
    return rows


# --- report ---------------------------------------------------------------------------------------------------


def _mark(ok: bool | None, text: str) -> str:
    return text if ok is None else f"{'✓' if ok else '✗'} {text}"


def report(meta: dict, mem: dict, e2e: list[dict] | None) -> None:
    t = mem["transfers"]
    print_table(
        f"Transfers, {meta['width']}x{meta['height']} RGBA ({meta['device']})",
        ["what", "GB/s", "target"],
        [["upload float32, fresh device buffer", f"{t['upload_f32_fresh_buffer']:.1f}",
          _mark(t["upload_f32_fresh_buffer"] >= 10, "≥ 10")],
         ["upload float32, pooled device buffer", f"{t['upload_f32']:.1f}", _mark(t["upload_f32"] >= 10, "≥ 10")],
         ["download float32", f"{t['download_f32']:.1f}", _mark(t["download_f32"] >= 10, "≥ 10")],
         ["upload half (bytes moved)", f"{t['upload_f16']:.1f}", ""],
         ["download half (bytes moved)", f"{t['download_f16']:.1f}", ""],
         ["device copy buffer→buffer (read + write)", f"{t['copy']:.1f}", "ceiling"]],
        left=(0, 2),
    )
    rows = []
    for r in mem["ops"]:
        k_target = r["kernel_target"]
        s_target = r["speedup_target"]
        target = []
        if k_target:
            target.append(_mark(r["of_copy"] >= k_target, f"kernel ≥ {k_target:.0%} of copy"))
        if s_target and "speedup" in r:
            target.append(_mark(r["speedup"] >= s_target, f"≥ {s_target:g}x CPU"))
        rows.append([r["op"], f"{r['kernel_s'] * 1e3:.2f}", f"{r['kernel_gbs']:.0f}", f"{r['of_copy']:.0%}",
                     f"{r['gpu_total_f32_s']:.3f}", f"{r['gpu_total_s']:.3f}",
                     f"{r['cpu_s']:.3f}" if "cpu_s" in r else "–",
                     f"{r['speedup']:.1f}x" if "speedup" in r else "–", ", ".join(target)])
    print_table(
        "In memory: GPU kernel, GPU with transfers, CPU backend",
        ["op", "kernel ms", "kernel GB/s", "of copy", "GPU+f32 s", "GPU+half s", "CPU s", "CPU/GPU", "target"],
        rows,
        caption="kernel GB/s counts the input read once and the output written once. GPU+f32 / GPU+half: "
                "upload + kernel + download moving float32 / half data (pooled buffers); CPU/GPU uses the half "
                f"figure, as EXR files are half. CPU backend in place with {meta['threads']} threads.",
        left=(0, 8),
    )
    if e2e:
        rows = []
        for r in e2e:
            g, c, o = r.get("gpu"), r.get("cpu"), r.get("oiiotool")
            r_gc, r_go = ratio(g, c), ratio(g, o)
            checks = []
            if r_gc is not None:
                checks.append(_mark(r_gc <= 1.0, "gpu ≤ cpu"))
            if r_go is not None:
                checks.append(_mark(r_go <= r["target_vs_oiiotool"], f"≤ {r['target_vs_oiiotool']:g}x oiiotool"))
            rows.append([r["op"], fmt_s(g), fmt_s(c), fmt_s(o), "–" if r_gc is None else f"{r_gc:.2f}",
                         "–" if r_go is None else f"{r_go:.2f}", ", ".join(checks)])
        print_table(
            "End to end, half ZIP EXR file → file (median wall s)",
            ["op", "oxi gpu", "oxi cpu", "oiiotool", "gpu/cpu", "gpu/oiiotool", "target"],
            rows,
            caption=f"{meta['width']}x{meta['height']} RGBA, --threads {meta['threads']}, median of {meta['runs']}.",
            left=(0, 6),
        )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--width", type=int, default=8192)
    p.add_argument("--height", type=int, default=4320)
    p.add_argument("--device", type=int, help="adapter index from `oxi probe` (default: the best of any kind)")
    p.add_argument("--runs", type=int, default=3, help="timed runs (median reported)")
    p.add_argument("--reps", type=int, default=5, help="kernel calls per timed run (amortises the wait)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--ops", default="", help="subset of: " + ",".join(c.key for c in mem_cases(8, 8)))
    p.add_argument("--no-cpu", action="store_true", help="skip the CPU backend in memory")
    p.add_argument("--no-e2e", action="store_true", help="skip the file → file runs")
    p.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "oxi-bench-gpu")
    p.add_argument("--oxi", help="oxi command line (default: `oxi` script, else python -m oxi_cli)")
    p.add_argument("--json", type=Path, help="also write the figures as JSON ('-': stdout)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    compile_oxi_bytecode()
    from oxi_cli.backends.gpu.backend import WgpuBackend

    gpu = WgpuBackend(args.device)
    cpu = None
    if not args.no_cpu:
        from oxi_cli.backends.cpu.backend import CpuBackend

        cpu = CpuBackend(args.threads, wait_for_kernels=True)  # the kernels, never their stand-ins
    wanted = {k.strip() for k in args.ops.split(",") if k.strip()}
    cases = [c for c in mem_cases(args.width, args.height) if not wanted or c.key in wanted]
    meta = {"width": args.width, "height": args.height, "device": f"{gpu.adapter.name} via {gpu.adapter.api}",
            "threads": args.threads, "runs": args.runs, "reps": args.reps, "cpus": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M"), "command": " ".join(sys.argv)}
    print(f"{meta['device']}; {args.width}x{args.height} RGBA float32 = "
          f"{args.width * args.height * 16 / 2**20:.0f} MiB", file=sys.stderr)
    rng = np.random.default_rng(1)
    img = (rng.random((args.height, args.width, 4), dtype=np.float32) * 4 - 0.5).astype(np.float32)
    mem = in_memory(gpu, cpu, img, cases, args.runs, args.reps)
    del img
    e2e = None
    if not args.no_e2e:
        oxi = oxi_command(args.oxi)
        if oxi is None:
            print("note: the oxi CLI does not run; skipping end to end", file=sys.stderr)
        else:
            plate, cube = make_plate(args.workdir, args.width, args.height)
            meta["oiiotool"] = tool_version([*(oiiotool_command() or ["oiiotool"]), "--version"])
            e2e = end_to_end(oxi, plate, cube, args.workdir, args.width, args.height, args.threads, args.runs,
                             args.device)
    report(meta, mem, e2e)
    if args.json:
        write_json(args.json, {"meta": meta, "in_memory": mem, "end_to_end": e2e})
    return 0 if all(math.isfinite(r["kernel_s"]) for r in mem["ops"]) else 1


if __name__ == "__main__":
    sys.exit(main())
