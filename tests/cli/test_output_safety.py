"""Nothing is written outside the output folder, only regular files are replaced, killed runs leave no litter."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import OXI, hdr_rgba, run_oxi, write_exr


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "shots"
    folder.mkdir(parents=True)
    write_exr(folder / "a.exr", hdr_rgba(8, 12), aovs=False)
    return folder


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    "name",
    [
        "../../evil_{stem}{ext}",
        "{stem}/../../../x{ext}",
        "{parent}/../../../p{ext}",
        "../evil{ext}",
    ],
)
def test_a_name_that_climbs_out_of_the_output_folder_is_refused(tmp_path: Path, shots: Path, name: str):
    before = files_under(tmp_path)
    result = run_oxi("cdl", str(shots), "-o", str(tmp_path / "work" / "out"), "--slope", "1.1", "--name", name)
    assert result.returncode == 2, result.stderr
    assert "outside the output folder" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert files_under(tmp_path) == before


def test_a_field_that_expands_to_an_absolute_path_is_refused(tmp_path: Path):
    # An input at the filesystem root has an empty {parent}: '{parent}/x' would be '/x'.
    from oxi_cli.batch.inputs import InputItem, Inputs
    from oxi_cli.batch.naming import output_path, resolve_target
    from oxi_cli.errors import UsageError

    inputs = Inputs([InputItem(Path("/plate.exr"))], batch=True)
    target = resolve_target(str(tmp_path / "out"), inputs, "{parent}/x{ext}")
    with pytest.raises(UsageError, match="outside the output folder"):
        output_path(target, inputs.items[0])


def test_a_symlinked_subfolder_that_leads_outside_is_refused(tmp_path: Path, shots: Path):
    out = tmp_path / "work" / "out"
    elsewhere = tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "link").symlink_to(elsewhere, target_is_directory=True)
    result = run_oxi("cdl", str(shots), "-o", str(out), "--slope", "1.1", "--name", "link/{name}")
    assert result.returncode == 2 and "outside the output folder" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_recipe_output_name_is_held_to_the_same_folder(tmp_path: Path, shots: Path):
    recipe = tmp_path / "shared.toml"
    recipe.write_text('[output]\nname = "../../evil_{stem}{ext}"\n\n[[op]]\ncdl = { slope = [1.1, 1.0, 0.9] }\n')
    before = files_under(tmp_path)
    result = run_oxi("run", "--recipe", str(recipe), str(shots), "-o", str(tmp_path / "work" / "out"))
    assert result.returncode == 2, result.stderr
    assert "outside the output folder" in result.stderr
    assert files_under(tmp_path) == before


@pytest.mark.parametrize("name", ["{frame:>999999999}{ext}", "{stem:>9999999}{ext}", "{stem:>{stem}}{ext}"])
def test_a_huge_field_width_is_refused_at_once_in_one_short_line(tmp_path: Path, shots: Path, name: str):
    started = time.monotonic()
    result = run_oxi("cdl", str(shots), "-o", str(tmp_path / "out"), "--slope", "1.1", "--name", name)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and len(result.stderr) < 300
    assert time.monotonic() - started < 20


def test_a_device_at_the_output_path_is_never_replaced(tmp_path: Path, shots: Path):
    # The output name has an image extension but leads to /dev/null: the rename would replace the link only,
    # yet the user asked for the device, so the job is refused rather than quietly redirected.
    link = tmp_path / "out.exr"
    link.symlink_to(os.devnull)
    result = run_oxi("cdl", str(shots / "a.exr"), str(link), "--slope", "1.1")
    assert result.returncode == 2 and "not a regular file" in result.stderr
    assert link.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_fifo_at_the_output_path_is_refused(tmp_path: Path, shots: Path):
    fifo = tmp_path / "out.exr"
    os.mkfifo(fifo)
    result = run_oxi("cdl", str(shots / "a.exr"), str(fifo), "--slope", "1.1")
    assert result.returncode == 2 and "not a regular file" in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_only_regular_files_are_replaced_by_the_atomic_rename(tmp_path: Path):
    from oxi_cli.errors import UsageError
    from oxi_cli.io.atomic import atomic_output

    fifo = tmp_path / "x.exr"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"), atomic_output(fifo):
        pass
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_later_run_clears_the_temporaries_a_killed_run_left(tmp_path: Path, shots: Path):
    out = tmp_path / "out"
    out.mkdir()
    stale = out / f".a.oxi-tmp-{_dead_pid()}-abcd1234.exr"
    stale.write_bytes(b"half-written")
    live = out / f".a.oxi-tmp-{os.getpid()}-efgh5678.exr"  # a writer that is still running (this test)
    live.write_bytes(b"in flight")
    old = time.time() - 60
    for tmp in (stale, live):
        os.utime(tmp, (old, old))
    result = run_oxi("cdl", str(shots), "-o", str(out), "--slope", "1.1")
    assert result.returncode == 0, result.stderr
    assert not stale.exists() and live.exists()
    assert (out / "a.exr").is_file()


def test_skip_existing_never_takes_a_temporary_for_an_output(tmp_path: Path, shots: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / f".a.oxi-tmp-{_dead_pid()}-abcd1234.exr").write_bytes(b"half-written")
    result = run_oxi("cdl", str(shots), "-o", str(out), "--slope", "1.1", "--skip-existing", "--json")
    assert result.returncode == 0, result.stderr
    assert '"status": "ok"' in result.stdout and (out / "a.exr").is_file()


def _as_a_user(args: list[str]) -> list[str]:
    """The command as a user without root's override of permissions: as root (containers, CI images) it runs in a
    new user namespace (`unshare -U`), where a folder's mode binds root too. Its own process: a service's worker
    would write with the service's rights, which the namespace does not change."""
    if os.getuid() != 0:
        return args
    unshare = shutil.which("unshare")
    assert unshare, "as root the test needs util-linux's unshare to be refused a read-only folder"
    return [unshare, "-U", *args]


@pytest.mark.parametrize("output", ["ro/graded.exr", "-o ro/", "-o ro/new/"])
def test_a_read_only_output_folder_is_refused_before_any_work(tmp_path: Path, output: str):
    src = write_exr(tmp_path / "plate.exr", hdr_rgba(8, 12), aovs=False)
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    cmd = [OXI or "oxi", "cdl", str(src), *output.split(), "--slope", "1.1"]
    env = {**os.environ, "OXI_SERVER": "off", "OXI_BACKEND": "cpu", "COLUMNS": "200"}
    env.pop("OXI_OVERWRITE", None)
    res = subprocess.run(_as_a_user(cmd), cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 2, res.stderr
    assert res.stderr.count("\n") == 1 and "cannot write into the output folder ro (read-only" in res.stderr
    # Refused before reading: not even the input's header is read for it (no plan, no record of a file).
    assert "plate.exr" not in res.stderr and list((tmp_path / "ro").iterdir()) == []


def test_a_missing_output_folder_for_one_file_is_refused_before_any_work(tmp_path: Path):
    src = write_exr(tmp_path / "plate.exr", hdr_rgba(8, 12), aovs=False)
    res = run_oxi("cdl", str(src), str(tmp_path / "nowhere" / "graded.exr"), "--slope", "1.1", "--json")
    assert res.returncode == 2 and res.stdout == "", (res.stdout, res.stderr)
    assert "output folder" in res.stderr and "does not exist; create it first" in res.stderr
