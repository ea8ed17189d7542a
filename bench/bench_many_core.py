"""Every backend x strategy against `auto` and oiiotool (all threads), file to file, at 4K and 8K.

    python bench/bench_many_core.py [--sizes 4096x2160,8192x4320] [--ops cdl,lut3d,...] [--runs 3]
                                    [--backends cpu,gpu] [--workdir DIR] [--json FILE]

For each image and op: oiiotool; oxi with no flags (auto); oxi forced to each backend with --strategy
single and streaming. Prints median wall seconds, and per row: auto / oiiotool, auto / the fastest forced
run (issue 9: <= 1.1), streaming / single on each backend (<= 1.15), gpu / cpu single. RGBA half ZIP plates.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

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
from bench.bench_cpu import GRADE, MATRIX, oxi_command  # noqa: E402
from oxi_cli.formats.lut_cache import OPT_OUT as LUT_CACHE_OPT_OUT  # noqa: E402

OPS = ("copy", "cdl", "matrix", "lut3d", "lut3d-cold", "resize", "blur2", "blur5", "blur20")
# "lut3d-cold" parses the .cube in every run (OXI_LUT_CACHE=0), as a LUT's first use does; "lut3d" runs as a
# farm's later frames do, with the parsed table from oxi's cache.


def make_plate(path: Path, width: int, height: int) -> None:
    """Gradients, waves and grain in RGBA half, ZIP: compresses like a plate, not like noise."""
    import OpenEXR

    if path.exists():
        return
    rng = np.random.default_rng(1)
    x = (np.arange(width, dtype=np.float32) / width)[None, :]
    y = (np.arange(height, dtype=np.float32) / height)[:, None]
    rgba = {
        "R": (x * 2 - 0.2 + y).astype(np.float16),
        "G": np.sin(x * 30 + y * 9).astype(np.float16),
        "B": (rng.random((height, width), np.float32) * 3).astype(np.float16),
        "A": np.ones((height, width), np.float16),
    }
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}
    tmp = path.with_suffix(".tmp.exr")
    OpenEXR.File(header, rgba).write(str(tmp))
    tmp.replace(path)


def make_cube(path: Path, n: int = 65) -> None:
    if path.exists():
        return
    g = np.arange(n) / (n - 1)
    r, gg, b = np.meshgrid(g, g, g, indexing="ij")
    table = np.stack([r**0.8, gg**1.1 * 0.9 + 0.05 * r, b**1.2], -1)
    rows = table.transpose(2, 1, 0, 3).reshape(-1, 3)  # red fastest
    path.write_text(f"LUT_3D_SIZE {n}\n" + "\n".join(f"{a:.6f} {b:.6f} {c:.6f}" for a, b, c in rows) + "\n")


def op_args(op: str, cube: Path, width: int, height: int) -> tuple[list[str], list[str]]:
    """(oxi arguments, oiiotool arguments) for one op: the same maths in each tool's words."""
    m = ",".join(f"{v:.10g}" for v in MATRIX)
    triple = lambda v: ",".join(f"{x:.10g}" for x in v)  # noqa: E731
    half = f"{width // 2}x{height // 2}"
    return {
        "copy": (["run"], []),
        "cdl": (["cdl", "--slope", triple(GRADE.slope), "--offset", triple(GRADE.offset),
                 "--power", triple(GRADE.power), "--sat", f"{GRADE.sat:.10g}"], None),
        "matrix": (["matrix", "--matrix", m], ["--ccmatrix:transpose=1", m]),
        "lut3d": (["lut3d", "--lut", str(cube)], ["--ociofiletransform", str(cube)]),
        "lut3d-cold": (["lut3d", "--lut", str(cube)], ["--ociofiletransform", str(cube)]),
        "resize": (["resize", "--size", half], ["--resize:filter=lanczos3", half]),
        "blur2": (["blur", "--sigma", "2.25"], ["--blur", "9x9"]),
        "blur5": (["blur", "--sigma", "5.25"], ["--blur", "21x21"]),
        "blur20": (["blur", "--sigma", "20"], None),  # oiiotool's --blur 81x81 runs for minutes: not timed
    }[op]


def bench_image(width: int, height: int, args: argparse.Namespace, oxi: list[str], work: Path) -> list[dict]:
    src = work / f"plate_{width}x{height}.exr"
    make_plate(src, width, height)
    cube = work / "look65.cube"
    make_cube(cube)
    out = work / "out.exr"
    oiio = oiiotool_command()
    rows = []
    for op in args.ops:
        oxi_args, oiio_args = op_args(op, cube, width, height)
        if op == "cdl":  # oiiotool has no CDL flag: a CLF file through OCIO, as users do
            oiio_args = ["--ociofiletransform", str(work / "grade.clf")]
        cold = ["env", f"{LUT_CACHE_OPT_OUT}=0"] if op.endswith("-cold") else []
        cmd = [*cold, *oxi, oxi_args[0], str(src), str(out), *oxi_args[1:]]
        warm_up(cmd, src, work / "small.exr", args.backends)
        row: dict = {"size": f"{width}x{height}", "op": op}
        runs = args.runs
        row["auto"] = measure(cmd, runs).to_dict()
        for backend in args.backends:
            for strategy in ("single", "streaming"):
                forced = [*cmd, "--backend", backend, "--strategy", strategy]
                try:
                    row[f"{backend}-{strategy}"] = measure(forced, runs).to_dict()
                except Exception as e:  # noqa: BLE001 - a backend may be missing here; the table says so
                    row[f"{backend}-{strategy}"] = {"error": str(e).splitlines()[0]}
        if oiio is not None and oiio_args is not None:
            row["oiiotool"] = measure([*oiio, str(src), *oiio_args, "-o", str(work / "oiio.exr")], runs).to_dict()
        rows.append(row)
        print(summary_line(row, args.backends), file=sys.stderr, flush=True)
    return rows


def warm_up(cmd: list[str], src: Path, small: Path, backends: list[str]) -> None:
    """Compile each backend's kernels for this op once, untimed, on the small plate (same pixel types):
    users run oxi warm, from its kernel cache, after the first job."""
    on_small = [str(small) if part == str(src) else part for part in cmd]
    if "resize" in on_small:
        on_small[-1] = "128x128"
    for backend in backends:
        measure([*on_small, "--backend", backend], 1)


def write_clf(path: Path) -> None:
    sop = (f"<SOPNode><Slope>{' '.join(map(str, GRADE.slope))}</Slope><Offset>{' '.join(map(str, GRADE.offset))}"
           f"</Offset><Power>{' '.join(map(str, GRADE.power))}</Power></SOPNode>"
           f"<SatNode><Saturation>{GRADE.sat}</Saturation></SatNode>")
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<ProcessList compCLFversion="3" id="cdl">'
                    f'<ASC_CDL id="c" inBitDepth="32f" outBitDepth="32f" style="FwdNoClamp">{sop}</ASC_CDL>'
                    "</ProcessList>\n")


def _s(row: dict, key: str) -> float | None:
    cell = row.get(key) or {}
    return cell.get("median_s")


def figures(row: dict, backends: list[str]) -> dict[str, float | None]:
    forced = [v for k in (f"{b}-{s}" for b in backends for s in ("single", "streaming")) if (v := _s(row, k))]
    out = {"auto/oiiotool": ratio(_s(row, "auto"), _s(row, "oiiotool")),
           "auto/best": ratio(_s(row, "auto"), min(forced) if forced else None)}
    for b in backends:
        out[f"{b} stream/single"] = ratio(_s(row, f"{b}-streaming"), _s(row, f"{b}-single"))
    if "gpu" in backends and "cpu" in backends:
        out["gpu/cpu single"] = ratio(_s(row, "gpu-single"), _s(row, "cpu-single"))
    return out


def summary_line(row: dict, backends: list[str]) -> str:
    keys = ["oiiotool", "auto", *(f"{b}-{s}" for b in backends for s in ("single", "streaming"))]
    cells = " ".join(f"{k} {fmt_s(_s(row, k))}" for k in keys)
    return f"{row['size']} {row['op']}: {cells}"


def report(rows: list[dict], backends: list[str]) -> None:
    keys = ["oiiotool", "auto", *(f"{b}-{s}" for b in backends for s in ("single", "streaming"))]
    ratios = list(figures(rows[0], backends)) if rows else []
    table = []
    for row in rows:
        f = figures(row, backends)
        table.append([row["size"], row["op"], *(fmt_s(_s(row, k)) for k in keys),
                      *(fmt_ratio(f[r]) for r in ratios), f"{(row['auto'].get('peak_rss_mb') or 0):.0f}"])
    print_table(f"oxi on {os.cpu_count()} cores: median wall s, file to file", ["size", "op", *keys, *ratios,
                "auto MB"], table, left=(0, 1))


def startup(oxi: list[str], work: Path, runs: int) -> dict:
    small = work / "small.exr"
    make_plate(small, 256, 256)
    help_s = measure([*oxi, "--help"], runs).median_s
    cdl_s = measure([*oxi, "cdl", str(small), str(work / "small_out.exr"), "--slope", "1.1"], runs).median_s
    print(f"start-up: oxi --help {help_s:.2f} s; 256x256 cdl {cdl_s:.2f} s", flush=True)
    return {"help_s": help_s, "small_cdl_s": cdl_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4096x2160,8192x4320")
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--backends", default="cpu,gpu")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/oxi-many-core"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.ops = [o for o in args.ops.split(",") if o]
    args.backends = [b for b in args.backends.split(",") if b]
    args.workdir.mkdir(parents=True, exist_ok=True)
    write_clf(args.workdir / "grade.clf")
    compile_oxi_bytecode()
    oxi = oxi_command(None)
    if oxi is None:
        print("oxi does not run here", file=sys.stderr)
        return 1
    result = {"cores": os.cpu_count(), "startup": startup(oxi, args.workdir, args.runs), "rows": []}
    for size in args.sizes.split(","):
        w, h = (int(v) for v in size.split("x"))
        result["rows"] += bench_image(w, h, args, oxi, args.workdir)
    report(result["rows"], args.backends)
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
