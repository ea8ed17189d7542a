"""Where oxi's compiled CPU kernels live, what they are keyed on and which are compiled; no Numba import here.

The cache is one folder per key: a digest of the kernels' sources (every file a kernel is built from, oxi's
version with them), the Numba, llvmlite and Python versions and the CPU (model and feature flags, or
NUMBA_CPU_NAME / NUMBA_CPU_FEATURES when set). A folder built for another key is never looked in. Inside it
Numba checks each entry again (its version, the defining file's contents, the signature, the target CPU).

`OXI_KERNEL_CACHE=/path` names a cache others may share (a farm image built once with `oxi probe --compile`):
its key folder is used when it is this user's, or when it is read-only and complete. A folder that other
users may write into is refused (cached machine code runs as this user), as is one built for another key.
Otherwise the user's own cache is used: $XDG_CACHE_HOME/oxi/kernels/<key>.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import stat
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oxi_cli import host, leaving, trust
from oxi_cli.user_cache import cache_dir, sources_digest

ENV = "OXI_KERNEL_CACHE"
MANIFEST = "oxi-kernels.json"
LOCK = ".compiling.lock"
TURN = ".background.lock"  # held by the one background compile a user runs at a time
WANTED = ".wanted"  # a file per module asked for in the background
HERE = Path(__file__).parent
KERNELS = HERE / "backends" / "cpu" / "kernels"
# Kernel modules compiled as units (kernels/*.py that hold compiled loops), and the LUT row scanner.
SCANNER = "rows"


def modules() -> list[str]:
    """Every unit `oxi probe --compile` compiles: the kernel modules holding loops, then the row scanner."""
    helpers = {"__init__", "color", "mathf"}  # no loop of their own: compiled as part of the others
    return sorted(p.stem for p in KERNELS.glob("*.py") if p.stem not in helpers) + [SCANNER]


def _sources() -> list[Path]:
    return [HERE / "jit.py", HERE / "kernel_cache.py", HERE / "ops" / "codes.py", HERE / "formats" / "rows.py",
            *KERNELS.glob("*.py")]


def _version(package: str) -> str:
    """An installed package's version from its dist-info folder's name, without importing it (importlib.metadata
    took 0.1-0.35 s scanning every path entry on a 2-core x86-64 machine (AVX-512); this, a millisecond)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return "missing"
    site = Path(next(iter(spec.submodule_search_locations))).parent
    prefix = package.lower() + "-"
    with contextlib.suppress(OSError):
        for entry in os.listdir(site):
            if entry.lower().startswith(prefix) and entry.endswith((".dist-info", ".egg-info")):
                return entry[len(prefix):].rsplit(".", 1)[0]
    return "unknown"


def _cpu() -> str:
    """The CPU the machine code is for: Numba's override when set, else the model and its feature flags."""
    forced = [os.environ.get(v, "") for v in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")]
    if any(forced):
        return "numba:" + "/".join(forced)
    model = host.cpuinfo(host.MODEL) or ""
    flags = " ".join(sorted((host.cpuinfo(*host.FLAGS) or "").split()))
    return f"{platform.machine()} {model} {hashlib.sha1(flags.encode()).hexdigest()[:12]}"


@functools.cache
def key_parts() -> dict[str, str]:
    """What the cache is keyed on, readable (`oxi probe` shows it)."""
    from oxi_cli import __version__

    return {"oxi": __version__, "sources": sources_digest(_sources())[:16], "numba": _version("numba"),
            "llvmlite": _version("llvmlite"), "python": platform.python_version(), "cpu": _cpu()}


@functools.cache
def key() -> str:
    return hashlib.sha1(json.dumps(key_parts(), sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Location:
    """The folder Numba reads kernels from, whether this process may write there, and where it came from.
    `note` says why OXI_KERNEL_CACHE was passed over (empty when it was used or is unset)."""

    path: Path | None
    writable: bool
    origin: str
    note: str = ""


def _writable(folder: Path) -> bool:
    """Whether this user may, and means to, write into `folder`: its mode grants its owner writing (root may
    write anywhere, so a folder made read-only by its mode is taken as read-only for root too) on a writable
    mount."""
    try:
        owner_writes = bool(folder.stat().st_mode & stat.S_IWUSR)
    except OSError:
        return False
    return owner_writes and os.access(folder, os.W_OK) and not trust.read_only_mount(folder)


def why_untrusted(folder: Path) -> str | None:
    """Why others could change the folder or anything in it (trust.py's test for it, the folders above it and
    every entry below), or None. A cache others built may hold files of theirs, so each is judged."""
    why = trust.why_untrusted(folder)
    if why or trust.read_only_mount(folder):
        return why
    try:
        for entry in folder.rglob("*"):
            why = trust.judge(entry)
            if why:
                return why
    except OSError as e:
        return f"{folder} cannot be listed ({e.strerror or e})"
    return None


def _shared(root: Path) -> Location | None:
    """OXI_KERNEL_CACHE's folder for this key, or None with the reason in a Location whose path is None."""
    folder = root / key()
    if not folder.is_dir():
        if root.is_dir() and _writable(root) and trust.why_untrusted(root) is None:
            return Location(folder, True, ENV)  # the user's own folder: kernels compile into it
        built = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        why = f"holds kernels for another key ({', '.join(built)}; this one is {key()})" if built else \
            "has no kernels for this oxi, Numba and CPU"
        return Location(None, False, ENV, f"{ENV}={root} {why}: ignored; `oxi probe --compile` builds them")
    why = why_untrusted(folder)
    if why:
        return Location(None, False, ENV, f"{ENV}={root}: {why}: ignored")
    if _writable(folder):
        return Location(folder, True, ENV)
    if read_manifest(folder).get("complete"):
        return Location(folder, False, ENV)
    return Location(None, False, ENV, f"{ENV}={root} is read-only and incomplete (not built by `oxi probe "
                                      "--compile`): ignored")


@functools.cache
def location() -> Location:
    """Where kernels load from and compile to in this process (see the module's docstring); a service worker
    looks again for each job (worker.py), and every load of a kernel checks its folder again (jit.py)."""
    note = ""
    root = os.environ.get(ENV, "").strip()
    if root:
        found = _shared(Path(root).expanduser())
        if found is not None and found.path is not None:
            return found
        note = found.note if found is not None else ""
    own = Path(cache_dir("kernels"), key())
    why = trust.private_folder(own)
    if why is None:
        return Location(own, True, "user cache", note)
    why = f"{why}: kernels are compiled in each process, never cached"
    return Location(None, False, "none", "; ".join(filter(None, (note, why))))


def prepare() -> None:
    """Before compiling everything: create OXI_KERNEL_CACHE's folder if it is missing (a job never does), and
    look again where the kernels go."""
    root = os.environ.get(ENV, "").strip()
    if root:
        with contextlib.suppress(OSError):
            Path(root).expanduser().mkdir(parents=True, exist_ok=True)
    location.cache_clear()


def read_manifest(folder: Path | None = None) -> dict[str, Any]:
    """What `oxi probe --compile` and the background compiles recorded in a cache folder ({} when none)."""
    folder = folder or location().path
    if folder is None or trust.why_untrusted(folder / MANIFEST):
        return {}
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("key") == key() else {}


def compiled() -> set[str]:
    """The modules recorded as compiled in this process's cache (every one when the cache is complete)."""
    manifest = read_manifest()
    if manifest.get("complete"):
        return set(modules())
    return set(manifest.get("modules", {}))


def record(done: dict[str, float], complete: bool = False) -> None:
    """Add modules compiled (name -> seconds) to the manifest; whole or not at all."""
    where = location()
    if where.path is None or not where.writable:
        return
    with lock(blocking=True, name=".manifest.lock"):
        manifest = read_manifest(where.path) or {"key": key(), "parts": key_parts(), "modules": {}}
        manifest["modules"].update({name: {"seconds": round(s, 3), "at": time.time()} for name, s in done.items()})
        manifest["complete"] = complete or manifest.get("complete", False) or set(manifest["modules"]) >= set(
            modules())
        tmp = where.path / f".{MANIFEST}.{os.getpid()}"
        try:
            tmp.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            os.replace(tmp, where.path / MANIFEST)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()


@contextlib.contextmanager
def lock(blocking: bool, name: str = LOCK) -> Iterator[bool]:
    """An exclusive lock on the cache folder (one compile at a time); yields whether it was taken."""
    where = location()
    if where.path is None or not where.writable:
        yield False
        return
    where.path.mkdir(parents=True, exist_ok=True)
    with _flock(where.path / name, blocking) as taken:
        yield taken


@contextlib.contextmanager
def _flock(path: Path, blocking: bool) -> Iterator[bool]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: compiles may then overlap, each saving whole files
        yield True
        return
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextlib.contextmanager
def background_turn() -> Iterator[bool]:
    """The user's one background compile at a time: yields True while this process holds the turn, False at
    once while another does. The lock lies in the user's own kernels folder, which every oxi build shares
    (else in this cache's folder)."""
    own = Path(cache_dir("kernels"))
    where = location()
    if trust.private_folder(own) is None:
        path = own / TURN
    elif where.path is not None and where.writable:
        path = where.path / TURN
    else:
        yield False
        return
    with _flock(path, blocking=False) as taken:
        yield taken


def want(names: Iterable[str]) -> None:
    """Ask for these modules to be compiled in the background: whichever process has the turn takes them."""
    where = location()
    if where.path is None or not where.writable:
        return
    with contextlib.suppress(OSError):
        (where.path / WANTED).mkdir(parents=True, exist_ok=True)
        for name in names:
            (where.path / WANTED / name).touch()


def wanted() -> set[str]:
    """The modules asked for in the background and not yet compiled."""
    where = location()
    if where.path is None:
        return set()
    try:
        asked = set(os.listdir(where.path / WANTED)) & set(modules())
    except OSError:
        return set()
    return asked - compiled()


def log_path() -> Path:
    """The background compiles' log, in the user's own cache (never a shared one)."""
    return Path(cache_dir("logs", "kernels.log"))


_started: set[str] = set()
_pending: set[str] = set()
_spawning = threading.Lock()
PENDING = ".pending"
# A job finds its cold kernels within its first tenth of a second (its warm-up on a tiny image): gathered this
# long, they compile in one background process rather than one each.
GATHER_S = 0.2


def compile_in_background(names: Iterable[str]) -> bool:
    """Have a detached process compile these kernel modules into the cache for the next job (this one goes
    another way): modules asked for within GATHER_S go to one process, started then or when this one exits.
    False where nothing can be cached (or every module was asked for already)."""
    where = location()
    with _spawning:
        wanted = set(names) - _started
        if not wanted or where.path is None or not where.writable:
            return False
        gathering = not _pending  # a new gathering: the last one's process has started (a long-lived process)
        _started.update(wanted)
        _pending.update(wanted)
    if gathering:
        timer = threading.Timer(GATHER_S, start_pending)
        timer.daemon = True
        timer.start()
        leaving.on_leave(start_pending)
    return True


def start_pending() -> None:
    """Start the background compile of the modules gathered so far, now rather than when the gathering ends or
    the process exits: a service worker calls it at the end of each job, as it leaves by os._exit (no exit
    handler runs) and may be killed with its service, while the compile lives on in a session of its own."""
    # Under the lock throughout: the exit handler must not return (and the process end, killing the timer's
    # thread) while the timer's spawn has started the child but not yet marked it pending.
    with _spawning:
        names = sorted(_pending)
        _pending.clear()
        where = location()
        if names and where.path is not None:
            _start(names, where.path)


def _start(names: list[str], folder: Path) -> None:
    """Ask for `names`, and start the background compile unless one runs already (it takes them: one compile
    at a time per user, as several on a 2-core machine slowed each other and every job beside them)."""
    import subprocess

    want(names)
    with background_turn() as free:
        if not free:
            return
    out, _ = trust.open_log(log_path())
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "oxi_cli.backends.cpu.compile", "--background", *names],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL if out is None else out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        # Marked before this process can exit, so a waiter never misses a compile that has yet to start.
        (folder / PENDING).mkdir(parents=True, exist_ok=True)
        (folder / PENDING / str(child.pid)).touch()
    except OSError:
        pass
    finally:
        if out is not None:
            os.close(out)


def done_in_background() -> None:
    """The background compile's last word: its pending mark goes (compile.py calls it on exit)."""
    where = location()
    if where.path is not None:
        with contextlib.suppress(OSError):
            (where.path / PENDING / str(os.getpid())).unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_for_compiles(limit_s: float = 900.0) -> bool:
    """Block until every background compile started on this cache has ended (a benchmark's or a test's wait);
    False on timeout."""
    start_pending()  # this process's own, if still being gathered
    where = location()
    if where.path is None:
        return True
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            pending = [int(p.name) for p in (where.path / PENDING).iterdir() if p.name.isdigit()]
        except OSError:
            pending = []
        if not any(_alive(pid) for pid in pending):
            return True
        time.sleep(0.05)
    return False


def size_bytes(folder: Path | None = None) -> int:
    folder = folder or location().path
    if folder is None or not folder.is_dir():
        return 0
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
