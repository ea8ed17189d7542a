"""What a process costs before its first pixel: interpreter, imports, and a job too small to measure, on each
backend, beside oiiotool on the same file. The floor that start-up puts under every file-to-file ratio.

    python bench/bench_floor.py [--runs 7] [--workdir DIR] [--json FILE]

Each import row is a fresh `python -c` (median of --runs, caches warm), so rows overlap: `import numba`
includes numpy. The 16x16 jobs are oxi's whole path (CLI, plan, read, kernels or device, write) with no
pixel work to speak of: a file-to-file job cannot be faster than its row, whatever its size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _common as common  # noqa: E402  (the repo root must be importable first)
from bench.bench_many_core import make_plate  # noqa: E402
from oxi_cli.bytecode import OPT_OUT  # noqa: E402

IMPORTS = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import OpenEXR (with numpy)": "import OpenEXR",
    "import numba (with numpy)": "import numba",
    "import typer, rich": "import typer, rich.console",
    "import oxi_cli.cli.main": "import oxi_cli.cli.main",
}


def floor_rows(work: Path, runs: int) -> dict[str, float | None]:
    """Median seconds per row; None where the row cannot run here (no GPU, no oiiotool)."""
    py = sys.executable
    rows: dict[str, float | None] = {
        name: common.measure([py, "-c", code], runs).median_s for name, code in IMPORTS.items()
    }
    rows["oxi --help"] = common.measure([py, "-m", "oxi_cli", "--help"], runs).median_s
    tiny = work / "tiny_16.exr"
    make_plate(tiny, 16, 16)
    job = [py, "-m", "oxi_cli", "cdl", str(tiny), str(work / "tiny_out.exr"), "--slope", "1.1,1,0.9", "--power", "1.2"]
    # The last row differs from the first only where numpy or Numba lack bytecode (oxi_cli/bytecode.py).
    for backend, env in (("cpu", None), ("gpu", None), ("cpu", {**os.environ, OPT_OUT: "0"})):
        name = f"oxi cdl 16x16 --backend {backend}" + (f", {OPT_OUT}=0" if env else "")
        try:
            common.measure([*job, "--backend", backend], 1, env)  # fills Numba's cache and the pipeline cache
            rows[name] = common.measure([*job, "--backend", backend], runs, env).median_s
        except common.BenchError:
            rows[name] = None
    oiio = common.oiiotool_command()
    rows["oiiotool 16x16 --mulc"] = None if oiio is None else common.measure(
        [*oiio, str(tiny), "--mulc", "1.1,1,0.9,1", "-o", str(work / "tiny_oiio.exr")], runs).median_s
    return rows


def probe_bytecode_line() -> str:
    """What `oxi probe` says of this host's bytecode (the installation's, or oxi's cache)."""
    import subprocess

    done = subprocess.run([sys.executable, "-m", "oxi_cli", "probe", "--json"], capture_output=True, text=True)
    try:
        return json.loads(done.stdout)["bytecode"]["line"]
    except (ValueError, KeyError):
        return f"oxi probe failed: {done.stderr.strip()[-200:]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per row (median reported)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "oxi-bench-floor")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON to this file ('-': stdout)")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    common.compile_oxi_bytecode()
    rows = floor_rows(args.workdir, args.runs)
    common.print_table(
        "Start-up floor: median wall s of a fresh process",
        ["what", "s"],
        [[name, common.fmt_s(s)] for name, s in rows.items()],
        caption=f"median of {args.runs}; import rows overlap (numba and OpenEXR include numpy)",
    )
    print(probe_bytecode_line())
    if args.json:
        common.write_json(args.json, {"runs": args.runs, "seconds": rows})


if __name__ == "__main__":
    main()
