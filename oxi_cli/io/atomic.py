"""Outputs appear whole or not at all: write a hidden temporary beside the output, fsync, then rename."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from oxi_cli.errors import ProcessingError, UsageError


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare the resolved names instead
        return os.path.realpath(a) == os.path.realpath(b)  # realpath, unlike resolve(), survives a symlink loop


def refuse_input_overwrite(output: Path, input_path: Path | None, in_place: bool) -> None:
    """Writing onto the file being processed destroys it if anything fails later: make the user say so."""
    if input_path is not None and not in_place and _same_file(output, input_path):
        raise UsageError(f"{output} is the input; pass --in-place to overwrite it")


def _check_destination(path: Path) -> None:
    if path.is_dir():
        raise UsageError(f"output {path} is a folder; give an image file name")
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"output folder {folder} does not exist; create it first")


def _final_mode(path: Path) -> int:
    """Keep a replaced file's permissions; a new file gets the usual 0666 minus the umask."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_output(path: Path) -> Iterator[Path]:
    """Yield a temporary path in `path`'s folder to write to; on success it becomes `path`.

    The temporary keeps the output's extension (libraries pick the format by it) and is hidden
    (`.name.oxi-tmp-XXXX.ext`). Any exception, Ctrl-C included, removes it and leaves `path` as it was.
    """
    path = Path(path)
    _check_destination(path)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.stem}.oxi-tmp-", suffix=path.suffix, dir=path.parent)
    except OSError as e:
        raise ProcessingError(f"cannot write into {path.parent} ({e.strerror}); check the folder") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, _final_mode(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; some filesystems cannot open folders, which is harmless."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
