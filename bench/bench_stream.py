"""Benchmark the planner on big square RGBA half ZIP EXRs: oxi under --memory-limit next to oiiotool.

    python bench/bench_stream.py [--sizes 4096,8192,16384] [--ops blur,lut3d] [--memory-limit 512M]
                                 [--oiio-blur-max 8192] [--timeout 1800] [--workdir DIR] [--json FILE]
                                 [--markdown FILE]

For each size the plate is generated band by band (so 16K and 32K plates never sit whole in memory) and
each job runs as its own process: oxi with `auto` under the memory limit (streaming once the image
outgrows it), oxi `single` with no limit where a single pass fits this machine's RAM (the reference for
the streaming time target), and oiiotool (blur σ=4 is `--blur 16x16`, the same σ; oiiotool's own truncation
differs, NOTES §1). Wall time and the process's peak RSS per run; sizes whose plate and output do not fit
the work folder's free disk are skipped and said so. oiiotool's blur is slow (about 4 minutes at 8K on two
cores), so it runs only up to --oiio-blur-max unless raised.

oxi runs through `bench_stream.py --child`, which plans and executes with oxi_cli.stream exactly as the
CLI's --strategy/--memory-limit do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402  (the repo root must be importable first)
    BenchError,
    compile_oxi_bytecode,
    fmt_mb,
    fmt_s,
    oiiotool_command,
    print_table,
    rss_floor_mb,
    run_once,
    tool_version,
    write_json,
)
from oxi_cli.errors import UsageError  # noqa: E402

BLUR_SIGMA = 4.0
OIIO_BLUR_WIDTH = 16  # oiiotool --blur W is σ = W / 4
LUT_SIZE = 33
RSS_TARGET_MB = 600
STREAM_VS_SINGLE = 1.2
GRAIN = 0.03  # sensor-like noise so ZIP packs the plate like real footage, not like flat colour


# --- inputs ------------------------------------------------------------------------------------------------


def plate_rows(width: int, height: int, y0: int, y1: int, seed: int = 7) -> dict[str, np.ndarray]:
    """Rows [y0, y1) of a deterministic HDR plate: soft gradients, a few highlights up to ~40, grain."""
    y = ((np.arange(y0, y1, dtype=np.float32) + 0.5) / height)[:, None]
    x = ((np.arange(width, dtype=np.float32) + 0.5) / width)[None, :]
    base = 0.18 * (0.6 + 0.4 * np.sin(6.3 * x + 2.1 * y)) * (0.4 + x * (1.2 - y))
    glow = 40.0 * np.exp(-((x - 0.7) ** 2 + (y - 0.3) ** 2) / 0.0008)
    rng = np.random.default_rng((seed, y0))
    out = {}
    for i, (name, tint) in enumerate(zip("RGB", (1.0, 0.85, 0.7), strict=True)):
        grain = 1.0 + GRAIN * rng.standard_normal(base.shape, dtype=np.float32)
        out[name] = ((base * tint + glow * (1 - 0.2 * i)) * grain).astype(np.float16)
    out["A"] = np.broadcast_to(np.clip(1.5 - y, 0, 1), base.shape).astype(np.float16)
    return out


def make_plate(path: Path, size: int) -> float:
    """Write a size x size RGBA half ZIP plate through the band writer; returns the seconds it took."""
    from oxi_cli.image import ImageMeta
    from oxi_cli.io.atomic import atomic_output
    from oxi_cli.io.exr_stream import ExrBandWriter, band_header

    t = time.perf_counter()
    types = {c: "half" for c in "RGBA"}
    header = band_header(ImageMeta("exr", types, "zip", {}), size, size, "zip")
    rows = max(16, (64 << 20) // (size * 8))
    with atomic_output(path) as tmp:
        writer = ExrBandWriter(tmp, header, types, name=path)
        for y in range(0, size, rows):
            writer.write_rows(plate_rows(size, size, y, min(size, y + rows)))
        writer.close()
    return time.perf_counter() - t


def write_lut(path: Path) -> None:
    from examples.make_examples import look_table, write_cube

    write_cube(path, look_table(LUT_SIZE), "oxi bench look")


# --- the oxi child process ---------------------------------------------------------------------------------


def _ops(op: str, cube: Path) -> list:
    from oxi_cli.ops import Blur

    if op == "blur":
        return [Blur(BLUR_SIGMA)]
    from oxi_cli.formats.registry import load_lut

    return load_lut(cube)


def child(argv: list[str]) -> int:
    """`--child OP STRATEGY MEMORY IN OUT CUBE`: plan and run one job, as the CLI will."""
    op, strategy, memory, src, dst, cube = argv
    from oxi_cli.backends.select import get_backend
    from oxi_cli.stream import execute_planned, plan_for_files

    backend = get_backend("cpu")
    ops = _ops(op, Path(cube))
    plan = plan_for_files(ops, src, dst, backend, strategy=strategy, memory_limit=None if memory == "-" else memory)
    execute_planned(ops, src, dst, backend, plan)
    return 0


# --- running -----------------------------------------------------------------------------------------------


@dataclass
class Row:
    size: int
    op: str
    tool: str  # "oxi auto", "oxi single", "oiiotool"
    plan: str = ""
    wall_s: float | None = None
    peak_rss_mb: float | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _plan(op: str, strategy: str, memory: str | None, src: Path, dst: Path, cube: Path) -> Any:
    from oxi_cli.backends.cpu.backend import CpuBackend
    from oxi_cli.stream import plan_for_files

    return plan_for_files(_ops(op, cube), src, dst, CpuBackend(), strategy=strategy, memory_limit=memory)


def _timed(cmd: list[str], timeout: int) -> tuple[float | None, float | None, str]:
    try:
        sample = run_once(["timeout", str(timeout), *cmd])
    except BenchError as e:
        text = str(e)
        return None, None, "timed out" if text.startswith("exit 124") else "failed: " + text.splitlines()[-1][:80]
    return sample.wall_s, sample.peak_rss_mb, ""


def bench_size(size: int, args: argparse.Namespace, work: Path, cube: Path) -> list[Row]:
    src = work / f"plate_{size}_rgba_half_zip.exr"
    out = work / "out.exr"
    if not src.exists():
        print(f"making {src.name} …", file=sys.stderr, flush=True)
        seconds = make_plate(src, size)
        print(f"  {src.stat().st_size / 2**20:.0f} MiB in {seconds:.1f} s", file=sys.stderr)
    rows = []
    me = [sys.executable, str(Path(__file__).resolve()), "--child"]
    for op in args.ops:
        jobs = [("oxi auto", "auto", args.memory_limit)]
        try:  # the reference: a forced single pass, where this machine's RAM holds one
            _plan(op, "single", args.single_limit, src, out, cube)
            jobs.append(("oxi single", "single", args.single_limit))
        except UsageError as e:
            rows.append(Row(size, op, "oxi single", note=f"skipped: {e}"))
        for tool, strategy, memory in jobs:
            plan = _plan(op, strategy, memory, src, out, cube)
            what = plan.strategy if plan.strategy == "single" else f"{plan.strategy} {plan.count}×{plan.tile_height}"
            print(f"{size} {op} {tool}: {plan.summary()}", file=sys.stderr, flush=True)
            wall, rss, note = _timed([*me, op, strategy, memory or "-", str(src), str(out), str(cube)], args.timeout)
            rows.append(Row(size, op, tool, what, wall, rss, note, {"plan": plan.to_dict()}))
            out.unlink(missing_ok=True)
        if "oiiotool" in args.tools and shutil.which("oiiotool"):
            if op == "blur" and size > args.oiio_blur_max:
                note = f"skipped: blur above {args.oiio_blur_max} (--oiio-blur-max)"
                rows.append(Row(size, op, "oiiotool", note=note))
                continue
            oiio_op = ["--blur", f"{OIIO_BLUR_WIDTH}x{OIIO_BLUR_WIDTH}"] if op == "blur" else [
                "--ociofiletransform", str(cube)]
            print(f"{size} {op} oiiotool …", file=sys.stderr, flush=True)
            oiio = oiiotool_command() or ["oiiotool"]
            wall, rss, note = _timed([*oiio, str(src), *oiio_op, "-o", str(out)], args.timeout)
            rows.append(Row(size, op, "oiiotool", "whole image", wall, rss, note))
            out.unlink(missing_ok=True)
    return rows


def disk_ok(work: Path, size: int) -> tuple[bool, str]:
    """Plate plus one output, each at most the raw half pixels (ZIP keeps grainy plates at ~60-80%)."""
    need = 2 * size * size * 8 + (1 << 30)
    free = shutil.disk_usage(work).free
    if (work / f"plate_{size}_rgba_half_zip.exr").exists():
        need -= size * size * 8
    return free >= need, f"needs {need / 2**30:.1f} GiB free, {free / 2**30:.1f} GiB available"


def verdicts(rows: list[Row]) -> list[str]:
    lines = []
    by = {(r.size, r.op, r.tool): r for r in rows}
    for r in rows:
        if r.tool != "oxi auto":
            continue
        key = f"{r.size} {r.op}"
        if r.peak_rss_mb is not None:
            ok = r.peak_rss_mb <= RSS_TARGET_MB
            lines.append(f"{key}: auto peak RSS {r.peak_rss_mb:.0f} MB {'≤' if ok else '>'} {RSS_TARGET_MB} MB "
                         f"({'met' if ok else 'missed'})")
        single = by.get((r.size, r.op, "oxi single"))
        if r.plan.startswith("streaming") and single and single.wall_s and r.wall_s:
            q = r.wall_s / single.wall_s
            lines.append(f"{key}: streaming / single {q:.2f} {'≤' if q <= STREAM_VS_SINGLE else '>'} "
                         f"{STREAM_VS_SINGLE} ({'met' if q <= STREAM_VS_SINGLE else 'missed'})")
        oiio = by.get((r.size, r.op, "oiiotool"))
        if oiio and oiio.wall_s is not None and r.wall_s is None:
            lines.append(f"{key}: oxi failed where oiiotool succeeded (missed)")
    return lines


def markdown(rows: list[Row], header: list[str], notes: list[str]) -> str:
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    return "\n".join(table + [""] + [f"- {n}" for n in notes]) + "\n"


def _cells(r: Row) -> list[str]:
    return [f"{r.size}²", r.op, r.tool, r.plan or "–", fmt_s(r.wall_s), fmt_mb(r.peak_rss_mb), r.note]


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2:])
    compile_oxi_bytecode()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4096,8192,16384", help="square sizes, comma-separated (32768 too)")
    parser.add_argument("--ops", default="blur,lut3d", help="blur and/or lut3d")
    parser.add_argument("--tools", default="oxi,oiiotool")
    parser.add_argument("--memory-limit", default="512M", help="oxi auto's --memory-limit")
    parser.add_argument("--single-limit", default=None, help="budget for the single-pass reference (default: "
                        "85%% of available RAM)")
    parser.add_argument("--oiio-blur-max", type=int, default=8192)
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/oxi-bench-stream"))
    parser.add_argument("--keep", action="store_true", help="keep the plates for the next run")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    args.ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    args.tools = [t.strip() for t in args.tools.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    from oxi_cli.memory import available_ram

    args.single_limit = args.single_limit or str(int(available_ram() * 0.85))
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    cube = work / "look33.cube"
    write_lut(cube)
    started = time.perf_counter()
    rows: list[Row] = []
    skipped = []
    for size in sizes:
        ok, why = disk_ok(work, size)
        if not ok:
            skipped.append(f"{size}²: {why}")
            continue
        t = time.perf_counter()
        rows += bench_size(size, args, work, cube)
        print(f"{size}² done in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
        if not args.keep:
            (work / f"plate_{size}_rgba_half_zip.exr").unlink(missing_ok=True)
    header = ["size", "op", "tool", "plan", "wall s", "peak RSS MB", "note"]
    notes = verdicts(rows) + [f"skipped {s}" for s in skipped]
    floor = rss_floor_mb()
    caption = (
        f"{os.cpu_count()} cores; oxi {args.memory_limit} budget bounds image buffers (runtime ~160 MB on top); "
        f"RSS floor of the timing wrapper {floor:.0f} MB; total {time.perf_counter() - started:.0f} s"
    )
    print_table("oxi planner: streaming under a memory limit vs single pass vs oiiotool", header,
                [_cells(r) for r in rows], caption=caption, left=(0, 1, 2, 3, 6))
    for line in notes:
        print(line)
    payload = {
        "machine": {
            "cores": os.cpu_count(),
            "oiiotool": tool_version([*(oiiotool_command() or ["oiiotool"]), "--version"]),
        },
        "memory_limit": args.memory_limit,
        "rows": [r.__dict__ for r in rows],
        "verdicts": notes,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.json:
        write_json(args.json, payload)
    if args.markdown:
        args.markdown.write_text(markdown(rows, header, notes))
    failed = [r for r in rows if r.tool.startswith("oxi") and r.note and not r.note.startswith("skipped")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
