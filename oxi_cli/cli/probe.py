"""`oxi probe`: every registered backend's devices, the rates `auto` weighs them by, which one it picks and why,
and the CPU kernel cache (never crashes); `--calibrate` measures the rates first and caches them, `--compile`
compiles every CPU kernel into the cache first."""

from __future__ import annotations

import json
import os
from typing import Any

from oxi_cli.backends import registry
from oxi_cli.bytecode import report as bytecode_report

GIB = 1 << 30


def collect() -> dict[str, Any]:
    """The probe as one JSON-ready document: every registered backend's devices (the host's last), auto's pick,
    problems."""
    from oxi_cli.backends.select import auto_choice

    problems: list[str] = []
    choice = auto_choice(thorough=True)
    env = (os.environ.get("OXI_BACKEND") or "").strip().lower()
    devices: list[dict[str, Any]] = []
    for kind in sorted(registry.KINDS.values(), key=lambda k: k.name == registry.HOST):
        for d in kind.describe(problems):
            d["auto"] = choice.kind == kind.name and choice.device == d.get("index")
            d["backend"] = kind.name
            devices.append(d)
    auto = {"backend": choice.kind, "device": choice.device, "reason": choice.reason}
    if env in registry.KINDS:
        auto["overridden_by"] = f"OXI_BACKEND={env}"
    problems += _refused_caches()
    return {"devices": devices, "auto": auto, "rates": _rates_in_use(), "bytecode": bytecode_report(),
            "kernel_cache": kernel_cache_report(), "problems": problems}


def _refused_caches() -> list[str]:
    """A line for each of oxi's caches and logs not used because someone else could change it (trust.py); the
    kernel cache, the bytecode cache and the rates say so on their own lines."""
    from oxi_cli.formats import lut_cache
    from oxi_cli.service.control import log_refused

    found = []
    if why := lut_cache.refused():
        found.append(f"LUT cache not used: {why}; big LUT files are parsed in each process")
    if why := log_refused():
        found.append(f"service log not used: {why}; the service writes to the terminal that started it, if any")
    return found


def probe(json_output: bool, calibrate: bool = False, compile_kernels: bool = False) -> None:
    """Print the probe as rich tables, or as one JSON document with `json_output`; with `compile_kernels`,
    compile every CPU kernel into the cache first; with `calibrate`, measure this host's rates and cache them."""
    compiled = compile_ahead(json_output) if compile_kernels else None
    calibration = run_calibration(json_output) if calibrate else None
    doc = collect()
    if compiled is not None:
        doc["compile"] = compiled
    if calibration is not None:
        doc["calibration"] = calibration
        doc["problems"] = calibration["problems"] + doc["problems"]
    if json_output:
        print(json.dumps(doc, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    # One column per device (each backend's, the host's last), one row per property: stays readable at 80
    # columns, where a row per device with a dozen columns does not.
    table = Table(title="oxi compute devices", show_lines=False)
    table.add_column("")
    for d in doc["devices"]:
        head = (f"{registry.kind(d['backend']).label} --device {d['index']}" if "index" in d
                else f"{registry.kind(registry.HOST).label} backend")
        table.add_column(head + ("  [bold green]<- auto[/]" if d["auto"] else ""), overflow="fold")
    for label, cell in _ROWS:
        table.add_row(label, *(cell(d) for d in doc["devices"]))
    console.print(table)
    for problem in doc["problems"]:
        console.print(f"[yellow]note:[/] {problem}", highlight=False)
    auto = doc["auto"]
    picked = auto["backend"] if auto["device"] is None else f"{auto['backend']} (--device {auto['device']})"
    console.print(f"auto picks: [bold]{picked}[/]: {auto['reason']}", highlight=False)
    console.print(f"rates: {doc['rates']['in_use']}", highlight=False)
    console.print(doc["bytecode"]["line"], highlight=False)
    console.print(doc["kernel_cache"]["line"], highlight=False)
    if compiled is not None:
        console.print(f"compiled {len(compiled['modules'])} kernel modules in {compiled['seconds']:.1f} s on "
                      f"{compiled['workers']} processes into {compiled['cache']} ({_size(compiled['size_bytes'])})",
                      highlight=False)
    if calibration is not None:
        console.print(f"calibrated in {calibration['seconds']:.1f} s, cached in {calibration['cache']}",
                      highlight=False)
    if "overridden_by" in auto:
        console.print(f"{auto['overridden_by']} is set: processing commands use that instead", highlight=False)


# Each row shows what a device's description holds: a GPU adapter's limits, the CPU's cores; no row asks which
# backend a device belongs to.
def _field(key: str, fmt: Any = str) -> Any:
    return lambda d: fmt(d[key]) if key in d else ""


def _rate(key: str, fmt: Any) -> Any:
    return lambda d: fmt(d["rates"][key]) if key in d["rates"] else ""


def _flops(d: dict[str, Any], key: str) -> str:
    if key + "_per_core" in d["rates"]:
        return f"{d['rates'][key + '_per_core'] / 1e9:.2f} per core"
    return f"{d['rates'][key] / 1e9:.2f}"


_ROWS = [
    ("device", lambda d: str(d.get("processor") or d["name"])),
    ("API", _field("api")),
    ("type", lambda d: d.get("type") or d["kind"]),
    ("driver", _field("driver")),
    ("max buffer", _field("max_buffer", lambda n: _size(n))),
    ("max storage binding", _field("max_binding", lambda n: _size(n))),
    ("max workgroup size", _field("max_workgroup_size")),
    ("3D texture limit", _field("max_texture_3d")),
    ("shader-f16", _field("shader_f16", lambda b: "yes" if b else "no")),
    ("memory", _field("memory", lambda n: _size(n) if n else "")),
    ("compute capability", _field("compute")),
    ("rates", lambda d: d["rates"]["source"]),
    ("GFLOP/s filters", lambda d: _flops(d, "flops")),
    ("GFLOP/s colour", lambda d: _flops(d, "color_flops")),
    ("start beyond CPU", _rate("extra_start_s", lambda v: f"{v:.2f} s")),
    ("upload / download", lambda d: "" if "upload_bps" not in d["rates"] else
     f"{d['rates']['upload_bps'] / 1e9:.2f} / {d['rates']['download_bps'] / 1e9:.2f} GB/s"),
    ("cores", _field("cores")),
    ("kernel threads", _field("threads")),
    ("SIMD", _field("simd")),
]


def run_calibration(quiet: bool) -> dict[str, Any]:
    """Measure the rates (backends/calibrate.py), write the cache atomically, and say what happened; each
    device measured is named on stderr as it starts unless `quiet` (--json)."""
    import sys

    from oxi_cli.backends import calibrate, rates_file
    from oxi_cli.errors import ProcessingError
    from oxi_cli.io.atomic import atomic_output

    def progress(line: str) -> None:
        if not quiet:
            print(f"oxi: calibrating {line}", file=sys.stderr, flush=True)

    from oxi_cli.trust import private_folder

    path = rates_file.cache_path()
    # Before measuring: seconds spent only to find the cache unwritable (or not ours alone) would be wasted.
    why = private_folder(path.parent) or (None if os.access(path.parent, os.W_OK) else f"{path.parent} is not "
                                                                                          "writable")
    if why:
        raise ProcessingError(f"cannot write the rates cache in {path.parent} ({why}); set XDG_CACHE_HOME to a "
                              "folder of your own")
    result = calibrate.calibrate(progress)
    if not result.usable:
        raise ProcessingError("; ".join(result.problems) or "calibration measured nothing")
    text = rates_file.merged(result.entry, path)
    with atomic_output(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return {"cache": str(path), "seconds": result.entry["seconds"], "problems": result.problems}


def _rates_in_use() -> dict[str, Any]:
    """The rates `auto` weighs jobs by now (each backend's auto device's where one was measured), and where they
    live."""
    from oxi_cli.backends import rates_file
    from oxi_cli.backends.cost import load_rates

    rates = load_rates()
    return {"cache": str(rates_file.cache_path()), "in_use": rates.describe(), **rates.to_dict()}


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    if n < 1 << 20:
        return f"{n >> 10} KiB"
    return f"{n / GIB:.1f} GiB" if n >= GIB else f"{n >> 20} MiB"


def kernel_cache_report() -> dict[str, Any]:
    """Where the CPU kernels load from, what that folder is keyed on, which modules it holds, its size, and one
    line saying so (with what to do about a cold or refused cache)."""
    from oxi_cli import kernel_cache

    where = kernel_cache.location()
    have = sorted(kernel_cache.compiled())
    every = kernel_cache.modules()
    size = kernel_cache.size_bytes()
    missing = [m for m in every if m not in have]
    path = str(where.path) if where.path is not None else None
    mode = "read-only" if where.path is not None and not where.writable else "read-write"
    if where.path is None:
        line = f"kernel cache: none ({where.note}); each process compiles what it runs"
    else:
        state = "every kernel compiled" if not missing else f"{len(have)} of {len(every)} kernel modules compiled"
        which = "the others" if have else "they"
        hint = "" if not missing else (f"; {which} compile in the background on first use, or all at once with "
                                       "`oxi probe --compile`")
        line = f"kernel cache: {path} ({where.origin}, {mode}; {state}, {_size(size)}){hint}"
        if where.note:
            line += f"; note: {where.note}"
    return {"path": path, "origin": where.origin, "writable": where.writable, "note": where.note,
            "key": kernel_cache.key(), "keyed_on": kernel_cache.key_parts(), "compiled": have, "missing": missing,
            "size_bytes": size, "log": str(kernel_cache.log_path()), "line": line}


def compile_ahead(quiet: bool) -> dict[str, Any]:
    """Compile every CPU kernel module (and the LUT row scanner) into the kernel cache, one process per core,
    with a progress bar on stderr unless `quiet` (--json); what was compiled, how long it took, the cache."""
    import threading
    import time

    from oxi_cli import host, kernel_cache
    from oxi_cli.errors import ProcessingError

    kernel_cache.prepare()
    where = kernel_cache.location()
    if where.path is None or not where.writable:
        why = where.note or f"{where.path} is read-only"
        raise ProcessingError(f"cannot compile into the kernel cache: {why}; set {kernel_cache.ENV} to a folder "
                              "of your own (or unset it) and run again")
    from oxi_cli.backends.cpu.compile import backend_modules, compile_everything

    names = backend_modules()
    workers = min(len(names), host.cores())
    t0 = time.perf_counter()
    done: dict[str, float] = {}
    scanner: list[BaseException] = []

    def compile_scanner() -> None:  # in this process, beside the workers
        try:
            from oxi_cli.formats.rows import compile_ahead as compile_rows

            start = time.perf_counter()
            compile_rows()
            done[kernel_cache.SCANNER] = time.perf_counter() - start
            kernel_cache.record({kernel_cache.SCANNER: done[kernel_cache.SCANNER]})
        except BaseException as exc:  # re-raised once the workers are done
            scanner.append(exc)

    rows = threading.Thread(target=compile_scanner, name="oxi-compile-rows")
    with _progress(quiet, len(names) + 1) as advance:
        rows.start()
        done.update(compile_everything(workers, lambda name, s: advance(name), names))
        rows.join()
        if not scanner:
            advance(kernel_cache.SCANNER)
    if scanner:
        raise scanner[0]
    kernel_cache.record({}, complete=True)
    return {"cache": str(where.path), "workers": workers, "seconds": round(time.perf_counter() - t0, 2),
            "modules": {name: round(s, 2) for name, s in sorted(done.items())},
            "size_bytes": kernel_cache.size_bytes()}


class _progress:
    """A rich progress bar on stderr (a no-op when quiet): `advance(name)` marks one module done."""

    def __init__(self, quiet: bool, total: int) -> None:
        self.quiet, self.total, self.bar, self.task = quiet, total, None, None

    def __enter__(self) -> Any:
        if not self.quiet:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("compiling CPU kernels"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TextColumn("{task.description}"),
                                console=Console(stderr=True), transient=False)
            self.bar.start()
            self.task = self.bar.add_task("", total=self.total)
        return self.advance

    def advance(self, name: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=name)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
