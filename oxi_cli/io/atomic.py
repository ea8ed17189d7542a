"""Outputs appear whole or not at all: write a hidden temporary beside the output, fsync, then rename."""

from __future__ import annotations

import contextlib
import glob
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
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


# Told of each output once it is in place (a service worker counts them for its client: tell_written).
_TELL: list[Callable[[Path], None]] = []


def tell_written(tell: Callable[[Path], None] | None) -> None:
    """Call `tell(path)` after each output of this process is renamed into place; None: stop."""
    _TELL[:] = [] if tell is None else [tell]


# When this process started (its job, in a service worker): a temporary older than that, whose writer is gone,
# was left by a killed run.
_STARTED = [time.time()]


def job_started() -> None:
    """A new job in a long-lived process (service/worker.py): temporaries from before it are judged as a process
    started now would judge them."""
    _STARTED[0] = time.time()
_TMP_MARK = ".oxi-tmp-"


def _check_destination(path: Path) -> None:
    """Only a regular file (or a link to one) is ever replaced: the rename would put a file in place of a
    device, FIFO or socket (as root, `oxi ... /dev/null` would replace the system's /dev/null)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise UsageError(f"output {path} cannot be checked ({e.strerror}); give another path") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise UsageError(f"output {path} is a folder; give an image file name")
    if mode is not None and not stat.S_ISREG(mode):
        raise UsageError(f"output {path} is not a regular file (a device, FIFO or socket); oxi only replaces files")
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"output folder {folder} does not exist; create it first")


def temporaries_of(path: Path) -> list[Path]:
    """The hidden temporaries `atomic_output` makes for `path`: `.{stem}.oxi-tmp-{pid}-XXXX{suffix}`."""
    pattern = f".{glob.escape(path.stem)}{_TMP_MARK}*{glob.escape(path.suffix)}"
    with contextlib.suppress(OSError):
        return list(path.parent.glob(pattern))
    return []


def remove_temporaries(paths: Iterable[Path]) -> None:
    for tmp in paths:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _stale(tmp: Path) -> bool:
    """Left by a run that was killed: older than this process and its writer (on this host) is gone."""
    try:
        if tmp.lstat().st_mtime >= _STARTED[0]:
            return False
        pid = int(tmp.name.split(_TMP_MARK, 1)[1].split("-", 1)[0])
    except (OSError, ValueError, IndexError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive but someone else's
        return False
    return pid == os.getpid()  # our own pid: reused, so the writer is gone


def _final_mode(path: Path) -> int:
    """Keep a replaced file's permissions; a new file gets the usual 0666 minus the umask."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read from /proc: os.umask can only read it by setting it, and while it is set another
    job thread creating a file gets that mask (0 made its files writable by everyone)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o077)  # no /proc: the most restrictive mask for the moment it takes
    os.umask(umask)
    return umask


@contextlib.contextmanager
def atomic_output(path: Path) -> Iterator[Path]:
    """Yield a temporary path in `path`'s folder to write to; on success it becomes `path`.

    The temporary keeps the output's extension (libraries pick the format by it) and is hidden
    (`.name.oxi-tmp-PID-XXXX.ext`). Any exception, Ctrl-C included, removes it and leaves `path` as it was;
    a SIGKILL cannot, so stale temporaries of the same output are cleared here first.
    """
    path = Path(path)
    _check_destination(path)
    remove_temporaries(t for t in temporaries_of(path) if _stale(t))
    try:
        prefix = f".{path.stem}{_TMP_MARK}{os.getpid()}-"
        fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=path.suffix, dir=path.parent)
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
    for tell in _TELL:
        tell(path)


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
