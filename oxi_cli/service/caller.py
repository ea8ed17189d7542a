"""What a served job shares with its caller: read in the client, matched or refused by the dispatcher, applied by
the worker (groups, resource limits, nice value, CPU affinity); the job runs with exactly these or on its own.

The client imports this module on every call: only os here (typing alone would cost it 30 ms), resource where
limits are read.
"""

from __future__ import annotations

import os

# Limits that count a process's whole life (CPU seconds, address space, data segment): a warm worker has already
# spent some of them, so a caller with other values than the service's runs its job itself.
WHOLE_LIFE = ("CPU", "AS", "DATA")
# Root options whose answer depends on the caller's parent processes (Typer's completion finds the shell there).
PROCESS_TREE_OPTIONS = ("--install-completion", "--show-completion")


def of_this_process() -> dict:
    """This process's pid, groups, resource limits, nice value and CPUs, as a request carries them."""
    import resource

    limits = {name[len("RLIMIT_"):]: list(resource.getrlimit(getattr(resource, name)))
              for name in dir(resource) if name.startswith("RLIMIT_")}
    return {
        "pid": os.getpid(),
        "gid": os.getegid(),
        "groups": sorted(os.getgroups()),
        "limits": limits,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "cpus": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [],
    }


def valid(caller: object) -> bool:
    """A request's "caller" field, checked field by field (the dispatcher parses nothing else from it)."""
    def ints(v: object, n: int | None = None) -> bool:
        return isinstance(v, list) and (n is None or len(v) == n) and len(v) <= 65536 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in v)

    return (
        isinstance(caller, dict)
        and set(caller) == {"pid", "gid", "groups", "limits", "nice", "cpus"}
        and all(isinstance(caller[k], int) and not isinstance(caller[k], bool) for k in ("pid", "gid", "nice"))
        and ints(caller["groups"]) and ints(caller["cpus"])
        and isinstance(caller["limits"], dict) and len(caller["limits"]) <= 64
        and all(isinstance(k, str) and ints(v, 2) for k, v in caller["limits"].items())
    )


def refusal(argv: list[str], caller: dict, peer: tuple[int, list[int]] | None = None) -> str | None:
    """Why this service cannot run the job as its caller's own process would, or None. The job then runs in the
    caller's process: a user's service cannot take other groups (os.setgroups needs CAP_SETGID), raise a limit
    or a priority above its own, or run on CPUs it may not use. `peer`: the caller's group and groups as the
    kernel gives them (peer_groups), where it does, over what the client said."""
    import resource

    own = of_this_process()
    gid, groups = peer if peer is not None else (caller["gid"], caller["groups"])
    if gid != own["gid"] or set(groups) != set(own["groups"]):
        return "groups differ from the service's"
    for name, theirs in caller["limits"].items():
        if not name.isalnum() or not hasattr(resource, f"RLIMIT_{name}"):
            return f"limit {name} is unknown here"
        mine = own["limits"][name]
        if theirs == mine:
            continue
        if name in WHOLE_LIFE:
            return f"limit {name} counts a whole process's life"
        if _above(theirs[1], mine[1]) or _above(theirs[0], theirs[1]):
            return f"limit {name} is above the service's own"
    if caller["nice"] < own["nice"]:
        return "priority is above the service's own"
    if own["cpus"] and not set(caller["cpus"]) <= set(own["cpus"]):
        return "CPUs are not all the service's"
    if any(a in PROCESS_TREE_OPTIONS for a in _root_options(argv)):
        return "shell is found among its own parent processes"
    return None


def peer_groups(sock: object) -> tuple[int, list[int]] | None:
    """The effective group and supplementary groups of the process at the other end of a Unix socket when it
    connected, from the kernel (Linux's SO_PEERCRED and SO_PEERGROUPS); None where they cannot be read."""
    import socket
    import struct

    so_peergroups = 59  # <asm-generic/socket.h>; Python names no constant for it
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        _pid, _uid, gid = struct.unpack("3i", sock.getsockopt(  # type: ignore[attr-defined]
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        # 1024 bytes, Python's most: a caller with over 256 groups (ERANGE) is judged by what it said
        raw = sock.getsockopt(socket.SOL_SOCKET, so_peergroups, 1024)  # type: ignore[attr-defined]
    except OSError:
        return None
    return gid, list(struct.unpack(f"{len(raw) // 4}I", raw))


def _above(a: int, b: int) -> bool:
    """Limit a is above limit b (-1, RLIM_INFINITY, is above every number)."""
    import resource

    inf = resource.RLIM_INFINITY
    return a != b and (a == inf or (b != inf and a > b))


def _root_options(argv: list[str]) -> list[str]:
    found = []
    for arg in argv:
        if not arg.startswith("-"):
            break
        found.append(arg.split("=", 1)[0])
    return found


def take_on(caller: dict) -> None:
    """Give this worker the limits, nice value and CPUs of `caller` (of_this_process()'s form), every thread of
    it (Linux keeps the last two per thread). A worker puts its own back after the job the same way; what it
    cannot (a raised priority: OSError, a hard limit back up: ValueError) makes it take no other job."""
    import resource

    for name, (soft, hard) in caller["limits"].items():
        which = getattr(resource, f"RLIMIT_{name}")
        if list(resource.getrlimit(which)) != [soft, hard]:
            resource.setrlimit(which, (soft, hard))
    threads = _threads()
    if caller["nice"] != os.getpriority(os.PRIO_PROCESS, 0):
        _each(threads, lambda tid: os.setpriority(os.PRIO_PROCESS, tid, caller["nice"]))
    if caller["cpus"] and set(caller["cpus"]) != os.sched_getaffinity(0):
        _each(threads, lambda tid: os.sched_setaffinity(tid, caller["cpus"]))


def _each(threads: list[int], apply: object) -> None:
    import contextlib

    for tid in threads:
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            apply(tid)  # type: ignore[operator]


def _threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [0]


def stopped(pid: int) -> bool:
    """Whether process `pid` is stopped (Ctrl-Z, SIGSTOP), from /proc; False where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state in (b"T", b"t")
