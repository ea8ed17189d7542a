"""Where a user's service lives and which build it is: a private runtime folder, a socket and lock per key."""

from __future__ import annotations

import os
import stat
import sys

# Settings a process binds while it starts (imports, Numba's cache folder, thread pools): a service started
# with other values is another service. Everything else in the environment travels with each job.
# (Typer reads its colour and width settings once, when it is imported.)
BOUND_AT_START = ("NUMBA_", "OMP_", "OPENBLAS_", "MKL_", "PYTHON", "LD_", "VK_", "WGPU_", "XDG_CACHE_HOME",
                  "OXI_KERNEL_CACHE", "TYPER_", "_TYPER_", "TERMINAL_WIDTH", "FORCE_COLOR", "PY_COLORS",
                  "GITHUB_ACTIONS")
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def install_stamp() -> str:
    """oxi's installed metadata as the installer wrote it (a wheel's RECORD, or an editable install's dist-info):
    its path, size, time and inode, a stat or two; a reinstall or an upgrade changes it. What changes under a
    running service without one (an edited source of an editable install, a package upgraded beside it) the
    service watches for itself, and exits on (service/watch.py): no call stats the sources."""
    found = dist_info()
    if found is None:
        return "no dist-info"
    parts = []
    for name in ("RECORD", "METADATA", "direct_url.json"):
        try:
            info = os.stat(os.path.join(found, name))
        except OSError:
            continue
        parts.append(f"{name} {info.st_size} {info.st_mtime_ns} {info.st_ino}")
    return f"{found} {' '.join(parts)}"


def installed_version() -> str | None:
    """The version oxi's installed metadata names (`oxi --version`), or None where it has none."""
    found = dist_info()
    try:
        with open(os.path.join(found or "", "METADATA"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():
                    break
    except OSError:
        pass
    return None


def dist_info() -> str | None:
    """oxi's dist-info folder: beside the package (a wheel's install), else in this interpreter's site-packages
    (an editable one's); two stats rather than importlib.metadata's scan of every path entry (0.1-0.35 s)."""
    from oxi_cli import __version__

    name = f"oxi-{__version__}.dist-info"
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for site in (os.path.dirname(PACKAGE), os.path.join(sys.prefix, "lib", version, "site-packages"),
                 os.path.join(sys.prefix, "Lib", "site-packages")):
        if os.path.isdir(os.path.join(site, name)):
            return os.path.join(site, name)
    return None


def _digest() -> object:
    """BLAKE2 from its own module: hashlib loads OpenSSL first, milliseconds every client pays."""
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b(digest_size=12)


def build_key(environ: dict[str, str] | None = None) -> str:
    """What makes two processes interchangeable: the interpreter, oxi's version and installation, and the
    settings bound at start. A service answers only clients with its own key."""
    from oxi_cli import COMMAND_DEFAULTS, __version__

    env = {**COMMAND_DEFAULTS, **(os.environ if environ is None else environ)}  # as a command process binds them
    bound = sorted((k, v) for k, v in env.items() if k.startswith(BOUND_AT_START))
    digest = _digest()
    # The interpreter by its real path and its environment (`python` and `python3` of one venv are one build;
    # two venvs of one interpreter are two).
    for part in (os.path.realpath(sys.executable), sys.prefix, sys.version, PACKAGE, __version__, repr(bound),
                 install_stamp()):
        digest.update(part.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
    return digest.hexdigest()


def _owned_private(path: str) -> bool:
    """A real folder (not a link) owned by this user that nobody else may read, write or enter."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def _safe_parent(path: str) -> bool:
    """Others cannot swap `path` for their own: its parent is ours, or sticky and root's (as /tmp is)."""
    try:
        info = os.stat(os.path.dirname(path))
    except OSError:
        return False
    return info.st_uid == os.getuid() or (info.st_uid == 0 and bool(info.st_mode & stat.S_ISVTX))


def _temp_folder(env: dict[str, str]) -> str:
    """The temporary folder as Python's tempfile finds it, without importing tempfile (its imports cost the
    client milliseconds)."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        if env.get(name):
            return env[name]
    return "/tmp"


def runtime_dir(environ: dict[str, str] | None = None) -> str | None:
    """The user's private folder for sockets: $XDG_RUNTIME_DIR/oxi, else oxi-<uid> in the temporary folder;
    created 0700, and used only if it is a real folder of this user's that no one else may enter."""
    if not hasattr(os, "getuid") or not hasattr(os, "fork"):
        return None  # Windows: no Unix sockets with peer credentials, no fork
    env = os.environ if environ is None else environ
    candidates = []
    if env.get("XDG_RUNTIME_DIR"):
        candidates.append(os.path.join(env["XDG_RUNTIME_DIR"], "oxi"))
    candidates.append(os.path.join(_temp_folder(env), f"oxi-{os.getuid()}"))
    for folder in candidates:
        if not _safe_parent(folder):
            continue
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError:
            continue
        if _owned_private(folder):
            return folder
    return None


def socket_path(folder: str, key: str) -> str:
    return os.path.join(folder, f"{key}.sock")


def lock_path(folder: str, key: str) -> str:
    return os.path.join(folder, f"{key}.lock")


def log_path(environ: dict[str, str] | None = None) -> str:
    """The service's log, in oxi's user cache folder."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "oxi", "service.log")


ENV = "OXI_SERVER"  # off: never; on: always (start one and wait); auto (default): use one, start one from a terminal


def mode(environ: dict[str, str] | None = None) -> str:
    """OXI_SERVER as `off`, `on` or `auto`: read here only (the client, `oxi server status`)."""
    value = (os.environ if environ is None else environ).get(ENV, "auto").strip().lower()
    if value in ("0", "off", "no", "false"):
        return "off"
    if value in ("1", "on", "yes", "true"):
        return "on"
    return "auto"
