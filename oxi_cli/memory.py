"""What memory a job may use: sizes as users write them (512M, 8G), the memory available now, this process's."""

from __future__ import annotations

import os
import re

from oxi_cli.errors import UsageError

# Half of what the kernel calls available: the rest stays for the page cache that EXR reads and writes go
# through and for other programs; the CPU backend's own "usable" figure (60%) bounds compute, not the process.
DEFAULT_RAM_FRACTION = 0.5
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}



def parse_bytes(text: str | int, option: str | None = None) -> int:
    """Bytes from `512M`, `2G`, `1.5GiB`, `300MB`, `65536`; units are binary (1K = 1024), case-insensitive.
    `option` (e.g. `--memory-budget`) starts the error message when given."""
    try:
        return _parse_bytes(text)
    except UsageError as e:
        if option is None:
            raise
        raise UsageError(f"{option}: {e}") from None


def _parse_bytes(text: str | int) -> int:
    if isinstance(text, int):
        if text <= 0:
            raise UsageError(f"a memory size must be positive, got {text}")
        return text
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(?:i?b)?\s*", str(text), re.IGNORECASE)
    if not match or (match.group(2) == "" and re.search(r"[a-z]", str(text), re.IGNORECASE)):
        raise UsageError(f"cannot read memory size {text!r}; write it like 512M, 2G or 1.5GiB")
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if value < 1:
        raise UsageError(f"a memory size must be at least 1 byte, got {text!r}")
    return int(value)


def format_size(n: int) -> str:
    """Bytes as the short binary figure people read: 512.0 MiB, 1.50 GiB."""
    if n >= 1 << 30:
        return f"{n / (1 << 30):.2f} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def available_ram() -> int:
    """MemAvailable from /proc/meminfo (what can be used without swapping), else free physical pages; never more
    than this process's own memory limit leaves it (limit_headroom)."""
    physical = _kib_fields("/proc/meminfo").get("MemAvailable")
    if physical is None:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    limited = limit_headroom()
    return min(physical, limited[0]) if limited is not None else physical


def memory_headroom() -> tuple[int, str]:
    """Bytes an allocation can still take before it fails, and what bounds them: the memory available plus free
    swap ('available'), or this process's own limit (limit_headroom's name for it)."""
    info = _kib_fields("/proc/meminfo")
    free = info.get("MemAvailable", available_ram()) + info.get("SwapFree", 0)
    limited = limit_headroom()
    return limited if limited is not None and limited[0] < free else (free, "available")


def limit_headroom() -> tuple[int, str] | None:
    """What `ulimit -d` (RLIMIT_DATA) or `ulimit -v` (RLIMIT_AS, which Grid Engine's h_vmem sets) still lets this
    process allocate, with the limit's name; None when neither is set."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    used = _kib_fields("/proc/self/status")
    limits = ((resource.RLIMIT_DATA, "VmData", "ulimit -d"), (resource.RLIMIT_AS, "VmSize", "ulimit -v"))
    found = []
    for limit, size, name in limits:
        soft, _ = resource.getrlimit(limit)
        if soft != resource.RLIM_INFINITY and size in used:
            found.append((max(0, soft - used[size]), f"left under this process's {name}"))
    return min(found) if found else None


def _kib_fields(path: str) -> dict[str, int]:
    """`Name:  123 kB` lines of a /proc file, in bytes; empty where the file cannot be read."""
    fields = {}
    try:
        with open(path) as f:
            for line in f:
                name, _, rest = line.partition(":")
                parts = rest.split()
                if len(parts) == 2 and parts[1] == "kB" and parts[0].isdigit():
                    fields[name] = int(parts[0]) * 1024
    except OSError:
        pass
    return fields


def default_ram_budget() -> int:
    return int(available_ram() * DEFAULT_RAM_FRACTION)


def current_rss() -> int:
    """Resident bytes of this process now."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
