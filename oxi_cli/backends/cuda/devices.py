"""CUDA devices as `oxi probe`, `auto` and calibration see them; imports numba-cuda only to list them."""

from __future__ import annotations

import ctypes.util
import functools
import glob
import os
import sys
from dataclasses import asdict
from typing import Any

# This backend's name in the registry (backends/registry.py), as --backend and the rates cache know it.
NAME = "cuda"
NO_DRIVER = "no NVIDIA driver on this machine (no /dev/nvidia* device node, no libcuda)"


def simulated() -> bool:
    """Numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1, read when Numba loads): kernels run as Python on
    the CPU, for tests of the code paths; never a device `auto` weighs."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "") not in ("", "0")


# numba-cuda from this version on compiles the CPU kernels' own loops for the device. numba's older built-in CUDA
# target (numba < 0.61 ships one) cannot: on an H100 machine whose numba had it, every colour op failed to type
# ("Signature mismatch") and blur and half transfers differed, while `auto` had picked CUDA.
NEEDS = (0, 30, 4)


def too_old() -> str | None:
    """Why the installed numba-cuda cannot run this backend (missing, or older than NEEDS), or None."""
    version = _numba_cuda_version()
    if version is not None and version >= NEEDS:
        return None
    needed = ".".join(map(str, NEEDS))
    found = "none is installed" if version is None else f"{'.'.join(map(str, version))} is installed"
    return f"the CUDA backend needs numba-cuda {needed} or later ({found}; pip install 'oxi[cuda]')"


@functools.cache
def _numba_cuda_version() -> tuple[int, ...] | None:
    from importlib import metadata

    try:
        text = metadata.version("numba-cuda")
    except metadata.PackageNotFoundError:
        return None
    return tuple(int("".join(c for c in part if c.isdigit()) or 0) for part in text.split(".")[:3])


def present() -> bool:
    """The registry's present(): a numba-cuda that can run this backend, and an NVIDIA driver (its device nodes,
    or libcuda where there are none, as in some containers), so listing CUDA devices may find one."""
    if too_old() is not None:
        return False
    if sys.platform.startswith("linux") and glob.glob("/dev/nvidia[0-9]*"):
        return True
    return _libcuda() is not None


@functools.cache
def _libcuda() -> str | None:
    return ctypes.util.find_library("cuda")


@functools.lru_cache(maxsize=1)
def list_devices() -> tuple[dict[str, Any], ...]:
    """Every CUDA device numba-cuda finds: index, name, driver, kind, api, memory and compute capability; raises
    what it raises when there is no driver."""
    if (why := too_old()) is not None:
        raise RuntimeError(why)
    from numba import cuda

    if simulated():
        return ({"index": 0, "name": "CUDA simulator", "driver": "numba-cuda simulator", "kind": "simulator",
                 "api": "CUDA", "memory": None, "compute": ""},)
    if not cuda.is_available():
        raise RuntimeError(NO_DRIVER)
    version = ".".join(str(v) for v in cuda.cudadrv.driver.driver.get_version())
    devices = []
    for gpu in cuda.gpus:
        with gpu:
            _, total = cuda.current_context().get_memory_info()
        name = gpu.name.decode() if isinstance(gpu.name, bytes) else str(gpu.name)
        devices.append({"index": int(gpu.id), "name": name, "driver": f"CUDA {version}", "kind": "discrete",
                        "api": "CUDA", "memory": int(total),
                        "compute": ".".join(str(v) for v in gpu.compute_capability)})
    return tuple(devices)


def listed() -> tuple[list[dict[str, Any]], int | None, int | None]:
    """The registry's lister: every device, the one `auto` weighs and the one `--backend cuda` opens (the first).
    The simulator lists none: its speed means nothing to calibrate, and it has no device to pick."""
    if simulated():
        return [], None, None
    devices = [{k: d[k] for k in ("index", "name", "driver", "kind", "api")} for d in list_devices()]
    first = devices[0]["index"] if devices else None
    return devices, first, first


def auto_device(thorough: bool = False) -> tuple[int | None, str]:
    """The registry's chooser: the device `auto` weighs against the host, and why (without `thorough`, from the
    driver's presence alone: listing devices loads numba-cuda and the driver)."""
    if simulated():
        return None, "the CUDA simulator is for tests, never faster than the host"
    if not present():
        return None, NO_DRIVER
    if not thorough:
        return 0, "an NVIDIA driver is present: CUDA device 0"
    try:
        devices = list_devices()
    except Exception as exc:  # no numba-cuda, a broken driver: auto must still work
        return None, f"numba-cuda could not list devices ({type(exc).__name__}: {exc})"
    if not devices:
        return None, "the NVIDIA driver lists no CUDA device"
    return devices[0]["index"], f"CUDA device {devices[0]['index']} {devices[0]['name']} ranks first"


def held() -> dict[int, str]:
    """The registry's holder: the devices this process holds open (a warm worker keeps them between jobs), asked
    without importing numba-cuda."""
    backend = sys.modules.get("oxi_cli.backends.cuda.backend")
    opened = getattr(backend, "opened", None)
    return opened() if opened is not None else {}


def describe_devices(problems: list[str]) -> list[dict[str, Any]]:
    """`oxi probe`'s rows (the registry's describer): each device, its memory and compute capability, and the rates
    `auto` weighs it by; what stands in the way goes to `problems`."""
    if simulated() or not present():  # the simulator is no device (listed() says why)
        return []
    try:
        devices = list_devices()
    except Exception as exc:
        problems.append(f"numba-cuda could not list CUDA devices: {type(exc).__name__}: {exc}")
        return []
    return [{**d, "rates": _rates(d["index"])} for d in devices]


def _rates(index: int) -> dict[str, Any]:
    from oxi_cli.backends.cost import load_rates

    rates = load_rates({NAME: index}).device(NAME)
    return {"source": "measured" if rates.name else "defaults",
            **{key: value for key, value in asdict(rates).items() if key != "name"}}
