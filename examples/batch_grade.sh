#!/usr/bin/env bash
# Grade a folder of shots and a frame sequence with oxi, then resume and inspect: a runnable tour of batches.
#   examples/batch_grade.sh [WORK_FOLDER]     (default: a new temporary folder)
# The inputs are copies of the bundled examples/plate.exr, so nothing is downloaded.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="${1:-$(mktemp -d)}"
mkdir -p "$WORK/shots" "$WORK/plates"

# A shot folder, and a numbered sequence with frame 1005 missing (as after a failed render).
for shot in sh010 sh020 sh030; do cp "$HERE/plate.exr" "$WORK/shots/$shot.exr"; done
for frame in 1001 1002 1003 1004 1006 1007 1008; do cp "$HERE/plate.exr" "$WORK/plates/plate.$frame.exr"; done

# A batch over the sequence exits 1 for the missing frame (a hole in the output), after processing every frame
# that exists: the tour expects that status where frame 1005 is in range, and stops on any other. (Its note goes
# to stderr, as the command's own summary does: stdout may be a --json report.)
expect_missing_frame() {
  local status=0
  "$@" || status=$?
  if [ "$status" -ne 1 ]; then echo "expected exit 1 (frame 1005 missing), got $status" >&2; exit 1; fi
  echo "   (exit 1: frame 1005 is missing, as expected; every other frame was processed)" >&2
}

echo "== a folder through one CDL, two files at a time"
oxi cdl "$WORK/shots" -o "$WORK/graded" --cdl "$HERE/grade.cc" --name '{stem}_graded{ext}' --jobs 2

echo "== a sequence through a chain (grade, look, proxy size), one JSON record per frame"
expect_missing_frame oxi run "$WORK/plates/plate.####.exr" -o "$WORK/proxies/plate.####.exr" \
    --cdl "$HERE/grade.cc" --lut3d "$HERE/look.cube" --resize:filter=box 50% --json > "$WORK/proxies.jsonl"
python3 - "$WORK/proxies.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(f"  frame {r['frame']}: {r['status']:8} {r['seconds'] or 0:.2f} s  {r['output'] or r['error']}")
PY

echo "== the recipe (examples/dailies.toml): a first run stopped at 1004, then resumed with --skip-existing"
oxi run --recipe "$HERE/dailies.toml" "$WORK/plates/plate.####.exr" -o "$WORK/dailies/plate.####.exr" \
    --frames 1001-1004
expect_missing_frame oxi run --recipe "$HERE/dailies.toml" "$WORK/plates/plate.####.exr" \
    -o "$WORK/dailies/plate.####.exr" --skip-existing

echo "== the recipe over the shot folder: its [output] name template names the files"
oxi run --recipe "$HERE/dailies.toml" "$WORK/shots" -o "$WORK/shot_dailies/"

echo "== what came out"
ls "$WORK/shot_dailies"
oxi info "$WORK/dailies/plate.1001.exr" --stats
echo "outputs are in $WORK"
