"""The measured-rates cache (`oxi probe --calibrate`): where it lives, whose host it describes, and reading it."""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import platform
from pathlib import Path
from typing import Any

from oxi_cli import __version__, host
from oxi_cli.trust import why_untrusted
from oxi_cli.user_cache import cache_dir

# 2: the host's record under "host" and each backend with devices under "devices" by name (1 named the CPU and GPU).
FORMAT = 2
# A cache bigger than this is not one oxi wrote (an entry is ~2 KB): refuse it rather than parse it.
MAX_BYTES = 1 << 20


def cache_path() -> Path:
    """$XDG_CACHE_HOME/oxi/rates-2.json (~/.cache/oxi/...), beside the Numba kernel cache: a file a format, so
    oxi versions of different formats sharing a home folder (a farm's shows pinned to different releases)
    keep their own rates when either calibrates, rather than replacing a file the other cannot read."""
    return Path(cache_dir(f"rates-{FORMAT}.json"))


def host_key() -> dict[str, Any]:
    """What the rates depend on, learnt from a few small files (no wgpu, no Numba): oxi's version, the CPU
    model and core count, and the GPUs the kernel sees with their driver. The adapters' own names and
    drivers (which only wgpu can tell) are kept in each adapter's record and checked by `oxi probe`."""
    return {"oxi": __version__, "cpu": cpu_model(), "cores": os.cpu_count() or 1, "gpus": gpu_fingerprint()}


def key_id(key: dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def cpu_model() -> str:
    """'AMD EPYC 9454 48-Core Processor': platform.processor() only says 'x86_64' on Linux."""
    return host.cpuinfo(host.MODEL, "Model", "cpu model") or platform.processor() or platform.machine()


def gpu_fingerprint() -> list[str]:
    """PCI vendor:device of each DRM card and its kernel driver, and NVIDIA's driver version and GPUs (its
    devices need not appear under DRM): a swapped card or an upgraded kernel driver changes it."""
    found = []
    for card in sorted(glob.glob("/sys/class/drm/card[0-9]*/device")):
        try:
            ids = [Path(card, f).read_text().strip() for f in ("vendor", "device")]
            driver = os.path.basename(os.readlink(Path(card, "driver")))
        except OSError:
            continue
        found.append(f"{ids[0]}:{ids[1]} {driver}")
    with contextlib.suppress(OSError):
        found.append("nvidia " + Path("/sys/module/nvidia/version").read_text().strip())
    found += [f"nvidia {os.path.basename(g)}" for g in sorted(glob.glob("/proc/driver/nvidia/gpus/*"))]
    return sorted(set(found))


def refusal(path: Path) -> str | None:
    """Why the cache at `path` is not read (someone else could change it: trust.py), or None."""
    why = why_untrusted(path)
    return f"the rates cache {path} is not used ({why})" if why else None


def read_entry(path: Path | None = None) -> tuple[dict[str, Any] | None, str]:
    """This host's entry and "", or None and why not: no cache yet, written for other hosts, or damaged."""
    path = path or cache_path()
    why = refusal(path)
    if why:
        return None, why
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None, "no rates measured on this host"
    except OSError as e:
        return None, f"the rates cache {path} cannot be read ({e.strerror or e})"
    try:
        if len(raw) > MAX_BYTES:
            raise ValueError(f"over {MAX_BYTES >> 10} KiB")
        doc = json.loads(raw)
        if isinstance(doc, dict) and isinstance(doc.get("format"), int) and doc["format"] < FORMAT:
            return None, f"the rates cache {path} was written by an older oxi"
        entry = _hosts(doc).get(key_id(host_key()))
    except (ValueError, TypeError, AttributeError) as e:  # bad JSON, bad UTF-8, or the wrong shapes
        return None, f"the rates cache {path} is damaged ({type(e).__name__}: {str(e)[:80]})"
    if entry is None:
        return None, f"the rates cache {path} was measured on other hosts or another oxi version"
    if not isinstance(entry, dict):
        return None, f"the rates cache {path} is damaged (an entry is not an object)"
    return entry, ""


def merged(entry: dict[str, Any], path: Path | None = None) -> str:
    """The cache's text with this host's `entry` put in (other hosts' kept: a home folder shared by a farm's
    machines holds one entry per kind of machine); a damaged cache is replaced."""
    path = path or cache_path()
    try:
        hosts = _hosts(json.loads(path.read_bytes()[:MAX_BYTES]))
    except (OSError, ValueError, TypeError, AttributeError):
        hosts = {}
    hosts[key_id(entry["key"])] = entry
    return json.dumps({"format": FORMAT, "hosts": hosts}, indent=1, sort_keys=True) + "\n"


def _hosts(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("hosts"), dict):
        raise ValueError(f"not an oxi rates cache of format {FORMAT}")
    return doc["hosts"]
