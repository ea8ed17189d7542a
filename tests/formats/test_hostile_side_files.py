"""LUT and CDL paths that are not LUT or CDL files are refused in one line, quickly, without quoting the file."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from oxi_cli.errors import InputError
from oxi_cli.files import open_side_file, read_side_file
from oxi_cli.formats.registry import load_cdl, load_lut
from tests.formats.files import write

SECRET = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
LUT_EXTENSIONS = [".cube", ".3dl", ".spi1d", ".spi3d"]
CDL_EXTENSIONS = [".cc", ".ccc", ".cdl"]


def refused(load, path: Path) -> str:
    """load(path) fails at once with one InputError line; returns the message."""
    t0 = time.monotonic()
    with pytest.raises(InputError) as caught:
        load(path)
    assert time.monotonic() - t0 < 5
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("ext", LUT_EXTENSIONS + CDL_EXTENSIONS)
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path, ext: str):
    fifo = tmp_path / f"look{ext}"
    os.mkfifo(fifo)
    load = load_cdl if ext in CDL_EXTENSIONS else load_lut
    assert "is a FIFO (named pipe), not a regular file" in refused(load, fifo)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_behind_a_symlink_is_refused_before_it_is_read(tmp_path: Path, device: str):
    link = tmp_path / "look.cube"
    link.symlink_to(device)
    assert "is a character device, not a regular file" in refused(load_lut, link)


def test_a_symlink_to_a_lut_is_followed(tmp_path: Path):
    real = write(tmp_path / "real.cube", "LUT_3D_SIZE 2\n" + "0 0 0\n1 1 1\n" * 4)
    link = tmp_path / "link.cube"
    link.symlink_to(real)
    (op,) = load_lut(link)
    assert op.size == 2


def test_a_symlink_loop_is_one_line(tmp_path: Path):
    (tmp_path / "a.cube").symlink_to(tmp_path / "b.cube")
    (tmp_path / "b.cube").symlink_to(tmp_path / "a.cube")
    assert "symbolic link loop" in refused(load_lut, tmp_path / "a.cube")


@pytest.mark.parametrize("ext", LUT_EXTENSIONS + CDL_EXTENSIONS)
def test_a_text_file_that_is_not_a_lut_is_never_quoted(tmp_path: Path, ext: str):
    link = tmp_path / f"look{ext}"
    link.symlink_to(write(tmp_path / "passwd", SECRET))
    load = load_cdl if ext in CDL_EXTENSIONS else load_lut
    message = refused(load, link)
    for fragment in ("root", "daemon", "/bin/bash", "x:0"):
        assert fragment not in message.replace(str(tmp_path), ""), message


@pytest.mark.parametrize("ext", LUT_EXTENSIONS + CDL_EXTENSIONS)
def test_binary_data_is_not_a_text_lut(tmp_path: Path, ext: str):
    garbage = write(tmp_path / f"garbage{ext}", b"LUT_3D_SIZE 2\n" + os.urandom(4000))
    load = load_cdl if ext in CDL_EXTENSIONS else load_lut
    assert "not a text" in refused(load, garbage)


def test_a_misspelt_keyword_is_still_quoted(tmp_path: Path):
    lut = write(tmp_path / "typo.cube", "LUT_3D_SIZ 2\n")
    assert "unknown keyword 'LUT_3D_SIZ'" in refused(load_lut, lut)


def test_long_tokens_are_described_not_quoted(tmp_path: Path):
    token = "9" * 30 + "x" * 30
    lut = write(tmp_path / "long.cube", f"LUT_3D_SIZE 2\n0 0 {token}\n")
    message = refused(load_lut, lut)
    assert token not in message and "a 60-character token" in message


def test_a_file_over_the_cap_is_refused_before_reading(tmp_path: Path):
    big = tmp_path / "big.cube"
    with open(big, "wb") as f:
        f.truncate(64 << 10)  # sparse: nothing is written
    with pytest.raises(InputError, match=r"is 64 KiB; LUT files over 1 KiB are refused"):
        read_side_file(big, "LUT", 1 << 10)


def test_the_opened_file_is_blocking_and_readable(tmp_path: Path):
    path = write(tmp_path / "recipe.toml", "[op]\n")
    with open_side_file(path, "recipe", 1 << 20) as f:
        assert f.read() == b"[op]\n"


def test_a_fifo_with_a_writer_is_refused_too(tmp_path: Path):
    # A writer waiting on the other end must not turn the FIFO into an accepted LUT.
    fifo = tmp_path / "look.cube"
    os.mkfifo(fifo)
    done = threading.Event()

    def writer() -> None:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b"LUT_3D_SIZE 2\n")
            os.close(fd)
        except OSError:  # no reader: that is the point
            pass
        done.set()

    threading.Thread(target=writer, daemon=True).start()
    assert "FIFO" in refused(load_lut, fifo)
    done.wait(5)


@pytest.mark.parametrize("ext", [".cube", ".cc"])
def test_running_out_of_file_descriptors_is_the_machine_not_the_file(tmp_path: Path, ext: str):
    # A real EMFILE (no mocks): the process may open no more files. That is exit 1, not bad input (2).
    import subprocess
    import sys
    import textwrap

    path = write(tmp_path / f"look{ext}", "LUT_3D_SIZE 2\n" + "0 0 0\n" * 8)
    script = textwrap.dedent(f"""
        import os, resource
        from oxi_cli.formats import cdl_xml, cube  # noqa: F401 - imported now: imports open files too
        from oxi_cli.formats.registry import load_cdl, load_lut
        from oxi_cli import files as sidefile  # noqa: F401
        from oxi_cli.errors import OxiError
        fds = len(os.listdir("/proc/self/fd")) - 1  # the listing itself held one
        resource.setrlimit(resource.RLIMIT_NOFILE, (fds, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        try:
            (load_cdl if {ext!r} == ".cc" else load_lut)({str(path)!r})
        except OxiError as e:
            print(e.exit_code, e)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert res.stdout.startswith("1 ") and "the disk or the machine failed" in res.stdout, res.stdout + res.stderr


@pytest.mark.parametrize(
    ("ext", "text"),
    [
        (".cube", "LUT_3D_SIZE 256\n0 0 0\n"),
        (".spi3d", "SPILUT 1.0\n3 3\n256 256 256\n0 0 0 0 0 0\n"),
        (".spi1d", "Version 1\nLength 1048576\nComponents 3\n{\n0 0 0\n}\n"),
    ],
)
def test_a_lut_size_the_file_cannot_hold_allocates_nothing_for_it(tmp_path: Path, ext: str, text: str):
    import tracemalloc

    from oxi_cli.errors import FormatError

    lut = write(tmp_path / f"lie{ext}", text)
    with pytest.raises(FormatError):  # warm up: Numba's compile allocates too
        load_lut(lut)
    tracemalloc.start()
    try:
        with pytest.raises(FormatError):
            load_lut(lut)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak} bytes allocated for a {len(text)}-byte file"
