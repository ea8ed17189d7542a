"""What the service runs that can change under it: oxi's sources, every file the dispatcher imported, and the
packages installed beside them; the service exits when one changes, so a call never meets old code.

The client names a build by its installation only (paths.install_stamp: a stat or two), so an edited source of an
editable install, or numpy upgraded in place, must end the service itself. On Linux the kernel says so (inotify:
the event is queued when the file changes, before any later call connects, and the dispatcher reads it before a
client's request); elsewhere the files are stat'ed again every few seconds.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import time

_EVENTS = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800  # modify, attrib, close_write, moves...
_NONBLOCK_CLOEXEC = 0o4000 | 0o2000000
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, name length
SCAN_SECONDS = 3.0  # where there is no inotify


def _imported() -> dict[str, set[str]]:
    """Folder -> the file names in it the service runs: every imported module's file, oxi's whole package."""
    from oxi_cli.service.paths import PACKAGE

    found: dict[str, set[str]] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and os.path.isabs(path):
            found.setdefault(os.path.dirname(path), set()).add(os.path.basename(path))
    for tree in (PACKAGE, os.path.join(os.path.dirname(PACKAGE), "wgsl")):
        for root, dirs, files in os.walk(tree):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            found.setdefault(root, set()).update(f for f in files if f.endswith((".py", ".wgsl")))
    return found


def _sites() -> set[str]:
    """The folders packages are installed into (a new or removed dist-info or .pth there is an upgrade)."""
    return {p for p in sys.path if p and os.path.isdir(p) and p.endswith(("site-packages", "dist-packages"))}


class Watch:
    """`fileno()` for a selector (None: call `changed()` every few seconds instead); `changed()`: what changed,
    or ""."""

    def __init__(self) -> None:
        self.names = _imported()
        self.sites = _sites()
        self.fd: int | None = None
        self.folders: dict[int, str] = {}
        self.stamps: dict[str, tuple[int, int]] = {}
        self.next_scan = 0.0
        with contextlib.suppress(OSError, AttributeError, ImportError):
            self._inotify()
        if self.fd is None:
            self.stamps = self._stat()

    def _inotify(self) -> None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(_NONBLOCK_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        try:
            for folder in {*self.names, *self.sites}:
                wd = libc.inotify_add_watch(fd, os.fsencode(folder), _EVENTS)
                if wd < 0:
                    raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}")
                self.folders[wd] = folder
        except OSError:
            os.close(fd)
            raise
        self.fd = fd

    def fileno(self) -> int | None:
        return self.fd

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def changed(self) -> str:
        if self.fd is None:
            return self._scan()
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return ""
        offset = 0
        while offset < len(data):
            wd, mask, _, size = _HEADER.unpack_from(data, offset)
            name = data[offset + _HEADER.size:offset + _HEADER.size + size].rstrip(b"\0").decode(errors="replace")
            offset += _HEADER.size + size
            why = self._judge(self.folders.get(wd, ""), name)
            if why:
                return why
        return ""

    def _judge(self, folder: str, name: str) -> str:
        if name in self.names.get(folder, ()) or (folder in self.sites and name.endswith(
                (".dist-info", ".egg-info", ".pth"))):
            return os.path.join(folder, name)
        return ""

    def _stat(self) -> dict[str, tuple[int, int]]:
        found = {}
        for folder, names in self.names.items():
            for name in names:
                with contextlib.suppress(OSError):
                    info = os.stat(os.path.join(folder, name))
                    found[os.path.join(folder, name)] = (info.st_size, info.st_mtime_ns)
        for site in self.sites:
            with contextlib.suppress(OSError):
                found[site] = (0, os.stat(site).st_mtime_ns)
        return found

    def _scan(self) -> str:
        if time.monotonic() < self.next_scan:
            return ""
        self.next_scan = time.monotonic() + SCAN_SECONDS
        now = self._stat()
        return next((path for path, stamp in self.stamps.items() if now.get(path) != stamp), "")
