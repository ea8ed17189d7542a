"""The bundled examples as a new user meets them: every example script runs to its end, the committed files are
what examples/make_examples.py makes, and the plate is what the documented commands say it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def _env() -> dict[str, str]:
    """The test's environment with this tree's `oxi` first on PATH and no user setting that changes outcomes."""
    env = {k: v for k, v in os.environ.items() if k not in ("OCIO", "OXI_BACKEND", "OXI_OVERWRITE")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_every_example_script_is_run_by_a_test():
    scripts = sorted(path.name for path in EXAMPLES.iterdir() if path.suffix in (".sh", ".py"))
    assert scripts == ["batch_grade.sh", "make_examples.py"], "a new example script needs a test here"


def test_the_batch_tour_runs_to_its_end_through_the_missing_frame(tmp_path: Path):
    work = tmp_path / "tour"
    done = subprocess.run(["bash", str(EXAMPLES / "batch_grade.sh"), str(work)], capture_output=True, text=True,
                          env=_env(), timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "frame 1005 is missing, as expected" in done.stderr
    # The steps examples/README.md describes, the last ones included: the resumed recipe, the shot folder, info.
    assert sorted(p.name for p in (work / "dailies").iterdir()) == [
        f"plate.{f}.exr" for f in (1001, 1002, 1003, 1004, 1006, 1007, 1008)]
    assert len(list((work / "shot_dailies").iterdir())) == 3
    assert "diffuse.R" in done.stdout and "mean" in done.stdout  # `oxi info --stats`' table
    assert done.stdout.rstrip().endswith(f"outputs are in {work}")


def test_make_examples_reproduces_the_committed_files_byte_for_byte(tmp_path: Path):
    subprocess.run([sys.executable, str(EXAMPLES / "make_examples.py"), "--out", str(tmp_path)], check=True,
                   capture_output=True, env=_env(), timeout=300)
    made = sorted(path.name for path in tmp_path.iterdir())
    assert made == ["grade.cc", "look.cube", "plate.exr", "shots.ccc"]
    for name in made:
        assert (tmp_path / name).read_bytes() == (EXAMPLES / name).read_bytes(), f"examples/{name} is stale"


@pytest.mark.parametrize("command", [
    ["colorspace", "--to", "ACEScct"],
    ["display", "--display", "sRGB - Display", "--view", "ACES 2.0 - SDR 100 nits (Rec.709)"],
])
def test_the_plate_declares_acescg_so_the_documented_conversions_do_not_warn(tmp_path: Path, command: list[str]):
    out = tmp_path / ("out.exr" if command[0] == "colorspace" else "out.png")
    done = subprocess.run(["oxi", command[0], str(EXAMPLES / "plate.exr"), str(out), "--from", "ACEScg",
                           *command[1:]], capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", "the bundled plate contradicts the examples' --from ACEScg"
