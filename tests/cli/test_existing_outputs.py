"""An existing file is replaced only when the user says so (--overwrite, OXI_OVERWRITE=1, --in-place for the
input itself): a forgotten -o must not destroy a source frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.cli.conftest import hdr_rgba, read_exr, run_oxi, write_exr
from tests.cli.test_cli_errors import assert_one_line_error


@pytest.fixture
def seq(tmp_path: Path) -> Path:
    folder = tmp_path / "seq"
    folder.mkdir()
    for frame in (1001, 1002):
        write_exr(folder / f"plate.{frame}.exr", hdr_rgba(8, 12, seed=frame), aovs=False)
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"], ["env"]], ids=["plain", "--overwrite", "OXI_OVERWRITE=1"])
def test_a_forgotten_o_never_replaces_the_next_frame_of_the_sequence(seq: Path, overwrite: list[str]):
    """Two frames of one sequence as `IN OUT` are a forgotten -o whatever the overwrite setting (farms and shells
    set OXI_OVERWRITE=1): refused in one line before anything is read."""
    before = snapshot(seq)
    env = {"OXI_OVERWRITE": "1"} if overwrite == ["env"] else None
    flags = [] if overwrite == ["env"] else overwrite
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), str(seq / "plate.1002.exr"), "--slope", "1.1", *flags, env=env)
    assert_one_line_error(res, 2, "two frames of one sequence", "whatever --overwrite", "-o FOLDER", "--in-place")
    assert snapshot(seq) == before


def test_two_frames_with_in_place_grade_each_frame_onto_itself(seq: Path):
    before = snapshot(seq)
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), str(seq / "plate.1002.exr"), "--slope", "2", "--in-place")
    assert res.returncode == 0, res.stderr
    after = snapshot(seq)
    assert sorted(after) == sorted(before) and all(after[name] != before[name] for name in before)
    assert np.allclose(read_exr(seq / "plate.1002.exr")[1]["R"], hdr_rgba(8, 12, seed=1002)[..., 0] * 2, rtol=2e-3)


def test_one_frame_written_over_another_takes_an_explicit_o_and_overwrite(seq: Path):
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), "-o", str(seq / "plate.1002.exr"), "--slope", "2",
                  "--overwrite")
    assert res.returncode == 0, res.stderr
    assert np.allclose(read_exr(seq / "plate.1002.exr")[1]["R"], hdr_rgba(8, 12, seed=1001)[..., 0] * 2, rtol=2e-3)


def test_frames_of_different_sequences_stay_in_and_out(seq: Path, tmp_path: Path):
    out = tmp_path / "graded.1001.exr"
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), str(out), "--slope", "1.1")
    assert res.returncode == 0, res.stderr
    assert out.is_file()


def test_an_existing_single_output_is_refused_and_overwrite_replaces_it(seq: Path, tmp_path: Path):
    out = tmp_path / "graded.exr"
    assert run_oxi("cdl", str(seq / "plate.1001.exr"), str(out), "--slope", "1.1").returncode == 0
    first = out.read_bytes()
    again = run_oxi("cdl", str(seq / "plate.1001.exr"), str(out), "--slope", "1.2")
    assert_one_line_error(again, 2, "exists", "--overwrite")
    assert out.read_bytes() == first
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), str(out), "--slope", "1.2", "--overwrite")
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() != first


@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_oxi_overwrite_in_the_environment_replaces_outputs_as_a_farm_task_rerun_needs(seq: Path, tmp_path: Path,
                                                                                   value: str):
    out = tmp_path / "graded.exr"
    out.write_bytes(b"an earlier attempt")
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), str(out), "--slope", "1.1", env={"OXI_OVERWRITE": value})
    assert res.returncode == 0, res.stderr
    assert read_exr(out)[1]["R"].shape == (8, 12)


@pytest.mark.parametrize("value", ["0", "false", ""])
def test_oxi_overwrite_off_still_refuses(seq: Path, tmp_path: Path, value: str):
    out = tmp_path / "graded.exr"
    out.write_bytes(b"keep me")
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), str(out), "--slope", "1.1", env={"OXI_OVERWRITE": value})
    assert_one_line_error(res, 2, "--overwrite")
    assert out.read_bytes() == b"keep me"


def test_a_bad_oxi_overwrite_value_is_one_line(seq: Path, tmp_path: Path):
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), str(tmp_path / "o.exr"), "--slope", "1.1",
                  env={"OXI_OVERWRITE": "maybe"})
    assert_one_line_error(res, 2, "OXI_OVERWRITE", "'maybe'")


def test_a_batch_with_existing_outputs_is_refused_before_any_file_is_processed(seq: Path, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "plate.1002.exr").write_bytes(b"an earlier render")
    res = run_oxi("cdl", str(seq / "plate.####.exr"), "-o", str(out), "--slope", "1.1")
    assert_one_line_error(res, 2, "plate.1002.exr exists already", "--overwrite", "--skip-existing")
    assert snapshot(out) == {"plate.1002.exr": b"an earlier render"}  # frame 1001 was not processed either


def test_a_batch_refusal_counts_every_existing_output(seq: Path, tmp_path: Path):
    out = tmp_path / "out"
    assert run_oxi("cdl", str(seq), "-o", str(out), "--slope", "1.1").returncode == 0
    res = run_oxi("cdl", str(seq), "-o", str(out), "--slope", "1.2")
    assert_one_line_error(res, 2, "and 1 more exist already", "replace them")


def test_skip_existing_and_overwrite_each_let_a_batch_with_existing_outputs_run(seq: Path, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "plate.1002.exr").write_bytes(b"an earlier render")
    skip = run_oxi("cdl", str(seq / "plate.####.exr"), "-o", f"{out}/plate.####.exr", "--slope", "1.1",
                   "--skip-existing")
    assert skip.returncode == 0, skip.stderr
    assert (out / "plate.1002.exr").read_bytes() == b"an earlier render" and (out / "plate.1001.exr").exists()
    again = run_oxi("cdl", str(seq / "plate.####.exr"), "-o", f"{out}/plate.####.exr", "--slope", "1.1",
                    "--overwrite")
    assert again.returncode == 0, again.stderr
    assert read_exr(out / "plate.1002.exr")[1]["R"].shape == (8, 12)


def test_skip_existing_on_the_command_line_wins_over_oxi_overwrite(seq: Path, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "plate.1002.exr").write_bytes(b"done on an earlier run")
    res = run_oxi("cdl", str(seq), "-o", str(out), "--slope", "1.1", "--skip-existing",
                  env={"OXI_OVERWRITE": "1"})
    assert res.returncode == 0, res.stderr
    assert (out / "plate.1002.exr").read_bytes() == b"done on an earlier run"


def test_overwrite_and_skip_existing_together_are_refused(seq: Path, tmp_path: Path):
    res = run_oxi("cdl", str(seq), "-o", str(tmp_path / "out"), "--slope", "1.1", "--overwrite", "--skip-existing")
    assert_one_line_error(res, 2, "--overwrite", "--skip-existing", "give one")


def test_in_place_replaces_the_input_itself_without_overwrite(seq: Path):
    frame = seq / "plate.1001.exr"
    before = frame.read_bytes()
    res = run_oxi("cdl", str(frame), str(frame), "--slope", "1.1", "--in-place")
    assert res.returncode == 0, res.stderr
    assert frame.read_bytes() != before


def test_an_in_place_batch_runs_but_still_refuses_other_existing_files(seq: Path):
    res = run_oxi("cdl", str(seq / "plate.####.exr"), "-o", f"{seq}/plate.####.exr", "--slope", "1.1", "--in-place")
    assert res.returncode == 0, res.stderr
    other = write_exr(seq / "other.exr", hdr_rgba(8, 12, seed=3), aovs=False)
    before = snapshot(seq)
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), str(other), "--slope", "1.1", "--in-place")
    assert_one_line_error(res, 2, "exists", "--overwrite")
    assert snapshot(seq) == before


def test_an_output_that_is_another_input_of_the_run_is_refused_even_with_overwrite(tmp_path: Path):
    # y.exr's output ({parent}{ext} = x.exr) is out/x.exr, the batch's second input: it may not have been read yet.
    (tmp_path / "x").mkdir()
    (tmp_path / "out").mkdir()
    write_exr(tmp_path / "x" / "y.exr", hdr_rgba(8, 12), aovs=False)
    second = write_exr(tmp_path / "out" / "x.exr", hdr_rgba(8, 12, seed=1), aovs=False)
    before = second.read_bytes()
    res = run_oxi("cdl", str(tmp_path / "x" / "y.exr"), str(second), "-o", str(tmp_path / "out"),
                  "--name", "{parent}{ext}", "--slope", "1.1", "--overwrite")
    assert_one_line_error(res, 2, "is also an input of this run")
    assert second.read_bytes() == before


def test_a_recipe_run_refuses_an_existing_output_too(seq: Path, tmp_path: Path):
    recipe = tmp_path / "grade.toml"
    recipe.write_text('[output]\nname = "{base}_graded.{frame}{ext}"\n\n[[op]]\ncdl = { slope = [1.1, 1.0, 0.9] }\n')
    out = tmp_path / "out"
    out.mkdir()
    (out / "plate_graded.1001.exr").write_bytes(b"approved")
    res = run_oxi("run", "--recipe", str(recipe), str(seq), "-o", str(out))
    assert_one_line_error(res, 2, "plate_graded.1001.exr exists already", "--overwrite")
    assert snapshot(out) == {"plate_graded.1001.exr": b"approved"}
    single = run_oxi("run", "--recipe", str(recipe), str(seq / "plate.1001.exr"), str(out / "plate_graded.1001.exr"))
    assert_one_line_error(single, 2, "exists", "--overwrite")
    res = run_oxi("run", "--recipe", str(recipe), str(seq), "-o", str(out), "--overwrite")
    assert res.returncode == 0, res.stderr
    assert sorted(snapshot(out)) == ["plate_graded.1001.exr", "plate_graded.1002.exr"]


def test_plan_shows_the_plan_even_when_the_output_exists(seq: Path, tmp_path: Path):
    out = tmp_path / "graded.exr"
    out.write_bytes(b"keep me")
    res = run_oxi("cdl", str(seq / "plate.1001.exr"), str(out), "--slope", "1.1", "--plan")
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == b"keep me"
