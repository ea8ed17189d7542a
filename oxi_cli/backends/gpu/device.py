"""Enumerate wgpu adapters, describe them, rank them for `auto`, and say what is missing when none exist."""

from __future__ import annotations

import ctypes.util
import functools
import glob
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# This backend's name in the registry (backends/registry.py), as --backend and the rates cache know it.
NAME = "gpu"
# adapter_type as wgpu reports it -> oxi's kind.
_KINDS = {"DiscreteGPU": "discrete", "IntegratedGPU": "integrated", "CPU": "software"}
_SOFTWARE_NAMES = ("llvmpipe", "lavapipe", "swiftshader", "softpipe", "microsoft basic render")
# Native compute APIs before OpenGL, whose compute path is the weakest when the same device shows twice.
_API_ORDER = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 1}
SOFTWARE_HINT = (
    "for a software adapter install Mesa's Vulkan driver (Debian/Ubuntu: apt-get install "
    "mesa-vulkan-drivers libvulkan1); for a real GPU install its vendor's driver with Vulkan support"
)


@dataclass(frozen=True)
class AdapterInfo:
    """One adapter as `oxi probe` shows it; `index` is what `--device N` takes."""

    index: int
    name: str
    api: str
    kind: str  # discrete | integrated | software | unknown
    driver: str
    vendor_id: int
    device_id: int
    max_buffer: int
    max_binding: int
    max_workgroup_size: int
    max_texture_3d: int
    shader_f16: bool

    @functools.cached_property
    def memory(self) -> int | None:
        """Device memory in bytes where the platform tells (None when unknown); looked up on first use,
        as it may run nvidia-smi, which opening a device need not wait for.
        """
        return _memory(self.kind, self.name, self.vendor_id, self.device_id)

    @property
    def is_gpu(self) -> bool:
        """A real GPU that `auto` may choose (software and unknown adapters never are)."""
        return self.kind in ("discrete", "integrated")

    def rank(self) -> tuple[int, int, int]:
        """Smaller is better: discrete, integrated, unknown, software; native API before OpenGL."""
        order = {"discrete": 0, "integrated": 1, "unknown": 2, "software": 3}[self.kind]
        return order, _API_ORDER.get(self.api, 2), self.index

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "memory": self.memory}


# wgpu's primary backends. Its OpenGL backend starts EGL and a GL driver as well (on a 16-core host with an H100 GPU
# listing adapters took 0.72 s, here 0.54 -> 0.29 s without it) only to offer adapters that lack what oxi's shaders use
# (no float32-filterable, no shader-f16). WGPU_BACKEND (wgpu's own variable) still picks others.
PRIMARY_BACKENDS = ("Vulkan", "Metal", "DX12")


@functools.lru_cache(maxsize=1)
def raw_adapters() -> tuple[Any, ...]:
    """wgpu's adapters in its own order (enumerated once per process: it costs 0.1-0.7 s)."""
    import wgpu

    _choose_backends()
    return tuple(wgpu.gpu.enumerate_adapters_sync())


def _choose_backends() -> None:
    """Before wgpu's instance exists: the primary backends, or those named in WGPU_BACKEND ("vulkan,gl")."""
    names = {"vulkan": "Vulkan", "metal": "Metal", "dx12": "DX12", "gl": "GL", "opengl": "GL", "all": "All"}
    wanted = [names.get(b.strip().lower()) for b in os.environ.get("WGPU_BACKEND", "").split(",") if b.strip()]
    try:
        from wgpu.backends.wgpu_native.extras import set_instance_extras

        set_instance_extras(backends=[b for b in wanted if b] or list(PRIMARY_BACKENDS))
    except (ImportError, AttributeError):  # a wgpu-py without instance extras: wgpu's own default
        pass


def describe(index: int, adapter: Any) -> AdapterInfo:
    info = adapter.info
    limits = adapter.limits
    name = str(info.get("device") or info.get("description") or "unknown adapter")
    raw_type = str(info.get("adapter_type", "Unknown"))
    kind = _KINDS.get(raw_type, "unknown")
    if any(s in name.lower() for s in _SOFTWARE_NAMES):
        kind = "software"
    api = str(info.get("backend_type", "?"))
    return AdapterInfo(
        index=index,
        name=name,
        api=api,
        kind=kind,
        driver=str(info.get("description") or info.get("vendor") or ""),
        vendor_id=int(info.get("vendor_id", 0) or 0),
        device_id=int(info.get("device_id", 0) or 0),
        max_buffer=int(limits["max-buffer-size"]),
        max_binding=int(limits["max-storage-buffer-binding-size"]),
        max_workgroup_size=int(limits["max-compute-invocations-per-workgroup"]),
        max_texture_3d=int(limits["max-texture-dimension-3d"]),
        shader_f16="shader-f16" in adapter.features,
    )


def list_adapters() -> list[AdapterInfo]:
    """Every adapter wgpu finds; raises whatever wgpu raises when it cannot start at all."""
    return [describe(i, a) for i, a in enumerate(raw_adapters())]


def best(adapters: list[AdapterInfo], gpu_only: bool) -> AdapterInfo | None:
    """The adapter `auto` (gpu_only=True) or `--backend gpu` (any kind) would use."""
    pool = [a for a in adapters if a.is_gpu] if gpu_only else list(adapters)
    return min(pool, key=AdapterInfo.rank, default=None)


def auto_device(thorough: bool = False) -> tuple[int | None, str]:
    """The registry's chooser: the adapter `auto` weighs against the CPU (the best hardware GPU) and why, or None
    and why not. Without `thorough`, wgpu is not started where no GPU device node exists."""
    if not thorough and not may_have_hardware_gpu():
        return None, "no GPU device node (/dev/dri/renderD*, /dev/nvidia*) on this machine"
    try:
        adapters = list_adapters()
    except Exception as exc:  # no wgpu, no loader, driver crash: auto must still work
        return None, f"wgpu could not list adapters ({exc.__class__.__name__}: {exc})"
    return auto_pick(adapters)


def auto_pick(adapters: list[AdapterInfo]) -> tuple[int | None, str]:
    """Which of `adapters` `auto` weighs against the CPU, and why; None and why not."""
    chosen = best(adapters, gpu_only=True)
    if chosen is None:
        found = ", ".join(f"{a.name} ({a.kind})" for a in adapters) or "none"
        return None, f"no discrete or integrated GPU (adapters: {found}); Numba CPU ranks above software adapters"
    return chosen.index, f"{chosen.kind} GPU {chosen.name} via {chosen.api} ranks first"


def held() -> dict[int, str]:
    """The registry's holder: adapters this process has a device open on, by index, with their names; asked
    without importing wgpu (a process that never opened a device has not loaded the module that holds them)."""
    context = sys.modules.get("oxi_cli.backends.gpu.context")
    opened = getattr(context, "opened", None)  # None while another thread is still importing it
    return opened() if opened is not None else {}


def listed() -> tuple[list[dict[str, Any]], int | None, int | None]:
    """The registry's lister: every adapter, and those `auto` (hardware only) and `--backend gpu` (any kind) would
    open; raises what wgpu raises when it cannot list them."""
    adapters = list_adapters()
    picks = [best(adapters, gpu_only=gpu_only) for gpu_only in (True, False)]
    return ([{"index": a.index, "name": a.name, "driver": a.driver, "kind": a.kind, "api": a.api} for a in adapters],
            *(a.index if a is not None else None for a in picks))  # type: ignore[return-value]


def may_have_hardware_gpu() -> bool:
    """False only when this Linux machine has no GPU device node, so `auto` can skip wgpu's slow start."""
    if not sys.platform.startswith("linux"):
        return True
    nodes = ("/dev/dri/renderD*", "/dev/nvidia[0-9]*", "/dev/dxg", "/dev/kfd")
    return any(glob.glob(pattern) for pattern in nodes)


def missing_pieces() -> list[str]:
    """What stops wgpu from finding any adapter here, each with the way to get it."""
    problems = []
    try:
        import wgpu  # noqa: F401
    except ImportError as exc:
        return [f"the wgpu package cannot be imported ({exc}): pip install 'wgpu>=0.32,<0.33'"]
    if sys.platform.startswith("linux"):
        if ctypes.util.find_library("vulkan") is None:
            problems.append("no Vulkan loader (libvulkan.so.1): Debian/Ubuntu apt-get install libvulkan1")
        icd_dirs = ("/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d")
        has_icd = os.environ.get("VK_DRIVER_FILES") or os.environ.get("VK_ICD_FILENAMES")
        if not has_icd and not any(glob.glob(f"{d}/*.json") for d in icd_dirs):
            problems.append(f"no Vulkan driver (ICD) installed: {SOFTWARE_HINT}")
    return problems


def _memory(kind: str, name: str, vendor_id: int, device_id: int) -> int | None:
    """Device memory in bytes where the platform exposes it (wgpu itself does not)."""
    if kind == "software":
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return None
    for card in glob.glob("/sys/class/drm/card*/device"):
        try:
            vendor = int(Path(card, "vendor").read_text(), 16)
            device = int(Path(card, "device").read_text(), 16)
            if (vendor, device) == (vendor_id, device_id):
                return int(Path(card, "mem_info_vram_total").read_text())
        except (OSError, ValueError):
            continue
    if vendor_id == 0x10DE:
        return _nvidia_memory(name)
    return None


@functools.lru_cache(maxsize=8)
def _nvidia_memory(name: str) -> int | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run(
            [smi, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        gpu_name, _, mib = line.rpartition(",")
        if gpu_name.strip() and gpu_name.strip() in name and mib.strip().isdigit():
            return int(mib) * 1024 * 1024
    return None


def describe_devices(problems: list[str]) -> list[dict[str, Any]]:
    """`oxi probe`'s view of this backend (the registry's describer): each adapter, its limits and the rates `auto`
    weighs it by; what stands in the way goes to `problems` (a broken loader or driver never takes the probe down)."""
    try:
        adapters = list_adapters()
    except Exception as exc:
        problems.append(f"wgpu could not list adapters: {type(exc).__name__}: {exc}")
        adapters = []
    if not adapters:
        problems.extend(missing_pieces())
        if not problems:
            problems.append(f"wgpu found no adapter: {SOFTWARE_HINT}")
    return [{**a.as_dict(), "rates": _rates(a, problems)} for a in adapters]


def _rates(adapter: AdapterInfo, problems: list[str]) -> dict[str, Any]:
    """Adapter `adapter`'s measured rates, or the defaults; a record measured on another device or driver at
    that index is reported (auto cannot tell without wgpu, which it does not load to read the cache)."""
    from oxi_cli.backends.cost import load_rates, measured_device

    rates = load_rates({NAME: adapter.index}).device(NAME)
    record = measured_device(NAME, adapter.index)
    if rates.name and record is not None and (record.get("name"), record.get("driver")) != (
            adapter.name, adapter.driver):
        problems.append(f"GPU adapter {adapter.index} is {adapter.name} ({adapter.driver}) but its rates were "
                        f"measured on {record.get('name')} ({record.get('driver')}): run `oxi probe --calibrate`")
    return {"source": "measured" if rates.name else "defaults",
            **{key: value for key, value in asdict(rates).items() if key != "name"}}
