"""Two checkouts of oxi side by side: the same jobs as fresh processes, alternated run by run, for "speed did not
change" (a refactor) or "this change is faster" (noisy machines drift; alternating keeps both in the same minute).

    python3 bench/bench_trees.py --before ../wt-old --after . --runs 7
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Measurement, fmt_ratio, fmt_s, print_table, ratio, run_once, write_json  # noqa: E402

SIZES = {"64x48": (64, 48), "hd": (1920, 1080), "4k": (4096, 2160)}
JOBS = {
    "cdl": ["cdl", "--slope", "1.1", "--power", "1.2"],
    "resize 50%": ["resize", "--scale", "50%"],
    "blur 3": ["blur", "--sigma", "3"],
}


def plate(folder: Path, name: str, width: int, height: int) -> Path:
    """An RGBA half ZIP EXR of noise, as plates are stored."""
    import numpy as np
    import OpenEXR

    path = folder / f"{name}.exr"
    rgba = np.random.default_rng(width).uniform(0, 1, (height, width, 4)).astype(np.float16)
    OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}, {"RGBA": rgba}).write(
        str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", type=Path, required=True, help="a checkout (git worktree) of the earlier tree")
    p.add_argument("--after", type=Path, default=Path(__file__).resolve().parent.parent)
    p.add_argument("--runs", type=int, default=5, help="timed runs of each job on each tree (one more warms up)")
    p.add_argument("--sizes", default="64x48,hd")
    p.add_argument("--backend", default="auto")
    p.add_argument("--json", type=Path, help="write the samples here")
    args = p.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    work = Path(tempfile.mkdtemp(prefix="oxi-bench-trees-"))
    found: dict[tuple[str, str], Measurement] = {}
    for size in args.sizes.split(","):
        src = plate(work, size, *SIZES[size])
        for job, words in JOBS.items():
            for tree in trees:
                found[(f"{size} {job}", tree)] = Measurement(cmd=[])
            for run in range(args.runs + 1):
                for tree, root in trees.items():
                    # Each tree's own code, as an own process (the service is another benchmark's subject).
                    env = {"PYTHONPATH": str(root), "OXI_SERVER": "off"}
                    cmd = [sys.executable, "-m", "oxi_cli", words[0], str(src), str(work / f"out-{tree}.exr"),
                           *words[1:], "--backend", args.backend]
                    sample = run_once(cmd, env)
                    if run:
                        found[(f"{size} {job}", tree)].samples.append(sample)
                        found[(f"{size} {job}", tree)].cmd = cmd
    rows = []
    for label in dict.fromkeys(key[0] for key in found):
        before, after = found[(label, "before")], found[(label, "after")]
        rows.append([label, fmt_s(before.median_s), fmt_s(after.median_s),
                     fmt_ratio(ratio(after.median_s, before.median_s))])
    print_table(f"oxi as fresh processes, median of {args.runs} (s): {trees['before']} vs {trees['after']}",
                ["job", "before", "after", "after / before"], rows)
    if args.json:
        write_json(args.json, {f"{label} {tree}": m.to_dict() for (label, tree), m in found.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
