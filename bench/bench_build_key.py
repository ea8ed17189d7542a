"""What the `oxi` client pays to name its service's build (service/paths.py build_key) on every call: the first call
in a fresh process, as the client makes it, and later calls in one process; prints a table (--json: one document).

    python bench/bench_build_key.py [--runs 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

FIRST = """
import time
t = time.perf_counter()
from oxi_cli.service import paths
t1 = time.perf_counter()
paths.build_key()
t2 = time.perf_counter()
for _ in range(20):
    paths.build_key()
t3 = time.perf_counter()
print(t1 - t, t2 - t1, (t3 - t2) / 20)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30, help="fresh processes (default 30)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    rows = []
    for _ in range(args.runs):
        done = subprocess.run([sys.executable, "-c", FIRST], capture_output=True, text=True, check=True)
        rows.append([float(v) for v in done.stdout.split()])
    result = {name: round(statistics.median(r[i] for r in rows) * 1e3, 3)
              for i, name in enumerate(("import_ms", "first_key_ms", "later_key_ms"))}
    result["runs"] = args.runs
    if args.json:
        print(json.dumps(result))
        return
    print("| import paths (ms) | first build_key (ms) | later build_key (ms) | runs |")
    print("|---|---|---|---|")
    print(f"| {result['import_ms']} | {result['first_key_ms']} | {result['later_key_ms']} | {args.runs} |")


if __name__ == "__main__":
    main()
