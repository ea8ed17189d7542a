"""Whether anyone but this user (or root) could change a path: the check every cache and log of oxi's passes where
it is opened, each time.

What oxi reads back from a cache runs as this user (Numba's index files are pickles, bytecode is code) or decides
pixels, and a log written through a planted link appends to a file of the planter's choosing. So a path is used
only when every folder from / down to it is owned by this user or root and writable by nobody else (a sticky
folder such as /tmp may be: nobody may remove or rename there what is not theirs), or lies on a read-only mount.
Only the interpreter's own modules are imported here: the `oxi` client checks its log with it.
"""

from __future__ import annotations

import os
import stat

_MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup (ELOOP)


def why_untrusted(path: str | os.PathLike[str]) -> str | None:
    """None when nobody but this user or root can change what `path` names (its folders from / down, `path`
    itself where it exists, and every link on the way); else why not, in words. A part not yet made is
    fine: this user makes it. Windows: None (mode bits do not say who may write there, its ACLs do)."""
    if not hasattr(os, "getuid"):
        return None
    return _walk(os.path.abspath(os.fspath(path)), [0])


def _walk(path: str, links: list[int]) -> str | None:
    current = os.sep
    why = _judge(current, os.lstat(current))
    if why:
        return why
    for name in path.split(os.sep)[1:]:
        if name in ("", "."):
            continue
        if name == "..":
            current = os.path.dirname(current)
            continue
        here = os.path.join(current, name)
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            return None  # the rest is this user's to make
        except OSError as e:
            return f"{here} cannot be examined ({e.strerror or e})"
        if stat.S_ISLNK(info.st_mode):
            if not _owned(info):
                return f"{here} is a link owned by another user (uid {info.st_uid})"
            links[0] += 1
            if links[0] > _MAX_LINKS:
                return f"{here}: too many links"
            why = _walk(os.path.join(current, os.readlink(here)), links)
            if why:
                return why
            current = os.path.realpath(here)
            continue
        why = _judge(here, info)
        if why:
            return why
        current = here
    return None


def _owned(info: os.stat_result) -> bool:
    return info.st_uid in (os.getuid(), 0)


def _judge(path: str, info: os.stat_result) -> str | None:
    """Why others could change `path` itself (not what it points to), or None."""
    sticky_folder = stat.S_ISDIR(info.st_mode) and bool(info.st_mode & stat.S_ISVTX)
    others_write = info.st_mode & stat.S_IWOTH or (info.st_mode & stat.S_IWGRP and not _own_group(info.st_gid))
    if _owned(info) and (not others_write or sticky_folder):
        return None
    if read_only_mount(path):
        return None
    if not _owned(info):
        return f"{path} is owned by another user (uid {info.st_uid})"
    return f"other users may write into {path} (mode {stat.filemode(info.st_mode)})"


def _own_group(gid: int) -> bool:
    """A user-private group (named as this user, no other member): its write bit lets nobody else in."""
    try:
        import grp
        import pwd

        name = pwd.getpwuid(os.getuid()).pw_name
        group = grp.getgrgid(gid)
    except (ImportError, KeyError):
        return False
    return gid == os.getgid() and group.gr_name == name and set(group.gr_mem) <= {name}


def judge(path: str | os.PathLike[str]) -> str | None:
    """Why others could change `path` itself (a link counts as changeable: it is not followed here), or None;
    for the entries of a folder `why_untrusted` passed."""
    path = os.fspath(path)
    try:
        info = os.lstat(path)
    except OSError as e:
        return f"{path} cannot be examined ({e.strerror or e})"
    if stat.S_ISLNK(info.st_mode) and not read_only_mount(path):
        return f"{path} is a link"
    return _judge(path, info)


def read_only_mount(path: str | os.PathLike[str]) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def private_folder(folder: str | os.PathLike[str]) -> str | None:
    """`why_untrusted`, with the folder made (0700, its missing parents as usual) once the part that exists
    passes: None when it exists, or now does, as a folder only this user or root can change."""
    why = why_untrusted(folder)
    if why is None:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as e:
            return f"{folder} cannot be made ({e.strerror or e})"
        why = why_untrusted(folder)
    return why


def open_log(path: str | os.PathLike[str]) -> tuple[int | None, str]:
    """A descriptor appending to the log at `path` (made 0600 if missing) and "", or None and why not: its folder
    fails `private_folder`, or the name is a link (never followed), not a regular file, or another user's."""
    path = os.fspath(path)
    why = private_folder(os.path.dirname(path) or ".")
    if why:
        return None, why
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o600)  # a planted FIFO must not block us
    except OSError as e:
        return None, f"{path} cannot be opened ({e.strerror or e}{'; it is a link' if os.path.islink(path) else ''})"
    info = os.fstat(fd)
    why = None if stat.S_ISREG(info.st_mode) else f"{path} is not a regular file"
    why = why or _judge(path, info)
    if why:
        os.close(fd)
        return None, why
    os.set_blocking(fd, True)
    return fd, ""
