"""Outputs appear whole or not at all, never on top of the input unless asked."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from oxi_cli.errors import UsageError
from oxi_cli.image import Image
from oxi_cli.io import read_image, write_image
from oxi_cli.io.atomic import atomic_output
from tests.io.files import assert_same_planes, planes, read_exr, write_exr

SHAPE = (21, 34)


@pytest.fixture
def plate(tmp_path: Path) -> Path:
    return write_exr(tmp_path / "plate.exr", planes("RGBA", SHAPE, "half", seed=1))


def hidden_files(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_the_temporary_is_hidden_beside_the_output_with_its_extension(tmp_path: Path):
    out = tmp_path / "out.exr"
    with atomic_output(out) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".exr"
        assert tmp.name.startswith(".out.oxi-tmp-")
        tmp.write_bytes(b"whole")
        assert not out.exists()
    assert out.read_bytes() == b"whole"
    assert hidden_files(tmp_path) == []


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_write_leaves_no_temporary_and_the_old_output(tmp_path: Path, error):
    out = tmp_path / "out.exr"
    out.write_bytes(b"previous render")
    with pytest.raises(error), atomic_output(out) as tmp:
        tmp.write_bytes(b"half a fi")
        raise error()
    assert out.read_bytes() == b"previous render"
    assert hidden_files(tmp_path) == []


def test_a_writer_that_raises_leaves_no_temporary(tmp_path: Path, plate: Path):
    image = read_image(plate)
    out = tmp_path / "out.exr"
    out.write_bytes(b"previous render")
    broken = Image(image.width + 1, image.height, image.planes, image.meta)  # planes don't fit the size
    with pytest.raises(UsageError, match="not 35x21"):
        write_image(broken, out)
    assert out.read_bytes() == b"previous render"
    assert hidden_files(tmp_path) == []


def test_replacing_a_file_keeps_its_permissions(tmp_path: Path, plate: Path):
    out = tmp_path / "out.exr"
    out.write_bytes(b"old")
    out.chmod(0o640)
    write_image(read_image(plate), out)
    assert out.stat().st_mode & 0o777 == 0o640


def test_a_new_file_gets_the_umask_permissions(tmp_path: Path, plate: Path):
    umask = os.umask(0o022)
    try:
        write_image(read_image(plate), tmp_path / "new.exr")
    finally:
        os.umask(umask)
    assert (tmp_path / "new.exr").stat().st_mode & 0o777 == 0o644


def test_committing_an_output_never_loosens_the_umask_of_other_threads(tmp_path: Path):
    """Outputs committed on job threads while another thread creates files: every file gets the process's umask
    (reading the umask with os.umask set it to 0 for a moment, and a file made then was writable by everyone)."""
    import threading

    umask = os.umask(0o022)
    done = threading.Event()

    def commit() -> None:
        while not done.is_set():
            with atomic_output(tmp_path / "out.bin") as tmp:
                tmp.write_bytes(b"x")
            (tmp_path / "out.bin").unlink()

    writer = threading.Thread(target=commit)
    try:
        writer.start()
        made = []
        for i in range(3000):
            path = tmp_path / f"f{i}"
            path.touch()
            made.append(path)
    finally:
        done.set()
        writer.join()
        os.umask(umask)
    assert [p.name for p in made if p.stat().st_mode & 0o022] == []


def test_writing_onto_the_input_is_refused(tmp_path: Path, plate: Path):
    before = plate.read_bytes()
    image = read_image(plate)
    (tmp_path / "link.exr").symlink_to(plate)
    for spelling in (plate, tmp_path / "." / "plate.exr", tmp_path / "link.exr"):
        with pytest.raises(UsageError, match=r"is the input; pass --in-place to overwrite it"):
            write_image(image, spelling, input_path=plate)
    assert plate.read_bytes() == before
    assert hidden_files(tmp_path) == []


def test_in_place_replaces_the_input(tmp_path: Path, plate: Path):
    image = read_image(plate)
    brighter = {name: p * 2 for name, p in image.planes.items()}
    write_image(replace(image, planes=brighter), plate, input_path=plate, in_place=True)
    assert_same_planes(read_exr(plate)[1], brighter)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plate.exr"]


def test_output_problems_are_usage_errors(tmp_path: Path, plate: Path):
    image = read_image(plate)
    with pytest.raises(UsageError, match="output folder .* does not exist; create it first"):
        write_image(image, tmp_path / "missing" / "out.exr")
    (tmp_path / "dir.exr").mkdir()
    with pytest.raises(UsageError, match="is a folder; give an image file name"):
        write_image(image, tmp_path / "dir.exr")
    with pytest.raises(UsageError, match="extension '.bmp' is not an image format oxi knows"):
        write_image(image, tmp_path / "out.bmp")
