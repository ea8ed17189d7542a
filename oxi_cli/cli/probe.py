"""`oxi probe`: every wgpu adapter and the CPU backend, which one `auto` picks and why; never crashes."""

from __future__ import annotations

import json
import os
from typing import Any

GIB = 1 << 30


def collect() -> dict[str, Any]:
    """The probe as one JSON-ready document: devices (GPU adapters, then the CPU), auto's pick, problems."""
    from oxi_cli.backends.select import auto_choice

    problems: list[str] = []
    adapters: list[Any] = []
    try:
        from oxi_cli.backends.gpu.device import SOFTWARE_HINT, list_adapters, missing_pieces

        try:
            adapters = list_adapters()
        except Exception as exc:  # a broken loader or driver must not take the probe down
            problems.append(f"wgpu could not list adapters: {type(exc).__name__}: {exc}")
        if not adapters:
            problems.extend(missing_pieces())
            if not problems:
                problems.append(f"wgpu found no adapter: {SOFTWARE_HINT}")
    except ImportError as exc:
        problems.append(f"the GPU backend cannot load ({exc}): pip install 'wgpu>=0.32,<0.33'")

    choice = auto_choice(adapters=adapters)
    env = (os.environ.get("OXI_BACKEND") or "").strip().lower()
    devices: list[dict[str, Any]] = []
    for a in adapters:
        d = a.as_dict()
        d["auto"] = choice.kind == "gpu" and choice.adapter == a.index
        devices.append(d)
    devices.append({**_cpu_info(problems), "kind": "cpu", "auto": choice.kind == "cpu"})
    auto = {"backend": choice.kind, "device": choice.adapter, "reason": choice.reason}
    if env in ("cpu", "gpu"):
        auto["overridden_by"] = f"OXI_BACKEND={env}"
    return {"devices": devices, "auto": auto, "problems": problems}


def probe(json_output: bool) -> None:
    """Print the probe as rich tables, or as one JSON document with `json_output`."""
    doc = collect()
    if json_output:
        print(json.dumps(doc, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    # One column per device (adapters, then the CPU backend), one row per property: stays readable at 80
    # columns, where a row per device with a dozen columns does not.
    table = Table(title="oxi compute devices", show_lines=False)
    table.add_column("")
    for d in doc["devices"]:
        head = "CPU backend" if d["kind"] == "cpu" else f"--device {d['index']}"
        table.add_column(head + ("  [bold green]<- auto[/]" if d["auto"] else ""), overflow="fold")
    for label, cell in _ROWS:
        table.add_row(label, *(cell(d) for d in doc["devices"]))
    console.print(table)
    for problem in doc["problems"]:
        console.print(f"[yellow]note:[/] {problem}", highlight=False)
    auto = doc["auto"]
    picked = f"gpu (--device {auto['device']})" if auto["backend"] == "gpu" else "cpu"
    console.print(f"auto picks: [bold]{picked}[/]: {auto['reason']}", highlight=False)
    if "overridden_by" in auto:
        console.print(f"{auto['overridden_by']} is set: processing commands use that instead", highlight=False)


def _gpu(key: str, fmt: Any = str) -> Any:
    return lambda d: "" if d["kind"] == "cpu" else fmt(d[key])


def _cpu(key: str) -> Any:
    return lambda d: str(d.get(key, "?")) if d["kind"] == "cpu" else ""


_ROWS = [
    ("device", lambda d: str(d.get("processor", "cpu")) if d["kind"] == "cpu" else d["name"]),
    ("API", _gpu("api")),
    ("type", lambda d: "Numba CPU" if d["kind"] == "cpu" else d["kind"]),
    ("driver", _gpu("driver")),
    ("max buffer", _gpu("max_buffer", lambda n: _size(n))),
    ("max storage binding", _gpu("max_binding", lambda n: _size(n))),
    ("max workgroup size", _gpu("max_workgroup_size")),
    ("3D texture limit", _gpu("max_texture_3d")),
    ("shader-f16", _gpu("shader_f16", lambda b: "yes" if b else "no")),
    ("memory", lambda d: "" if d["kind"] == "cpu" else _size(d["memory"])),
    ("cores", _cpu("cores")),
    ("Numba threads", _cpu("numba_threads")),
    ("threading layer", _cpu("threading_layer")),
    ("SIMD", _cpu("simd")),
]


def _cpu_info(problems: list[str]) -> dict[str, Any]:
    try:
        from oxi_cli.backends.cpu.info import cpu_info

        return dict(cpu_info())
    except Exception as exc:
        problems.append(f"the CPU backend cannot load: {type(exc).__name__}: {exc}")
        return {"name": "cpu", "cores": os.cpu_count()}


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    return f"{n / GIB:.1f} GiB" if n >= GIB else f"{n >> 20} MiB"
