"""`oxi probe --calibrate`: this host's rates (backends/cost.py) from short real runs of oxi's own kernels."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

import oxi_cli
from oxi_cli.backends import rates_file, registry
from oxi_cli.host import cores
from oxi_cli.ops import Blur, Cdl, ColorOp, ImageOp

# Images tried from the smallest up, until a call takes LONG_ENOUGH_S: lavapipe blurs 256x144 in ~0.1 s on a
# 2-core x86-64 machine, an H100 GPU needs the largest before dispatch overheads stop dominating. The CPU starts at
# 2048x1152: on smaller images its blur ran 2.3x faster than on 4K plates (they fit in the caches).
SIZES = ((256, 144), (512, 288), (1024, 576), (2048, 1152), (4096, 2160))
CPU_SIZES = SIZES[3:]
LONG_ENOUGH_S = 0.02
# A call costs a fixed part and a part that grows with the work: rates are the slope between the smallest size
# and one SLOPE_SPAN times slower. `oxi probe --calibrate` on a 16-core host with an H200 GPU showed why: each
# upload cost ~12 ms whatever its size, and taking the amount over the time of the first call of 20 ms or more
# measured 0.4 GFLOP/s blurring and 23 MB/s uploading at 256x144 (jobs there reach 100x both), so auto kept an
# 8K blur on the CPU that the GPU ran faster.
SLOPE_SPAN = 3.0
SLOPE_FLOOR = 1.5
# Time spent repeating each measurement at its size (the fastest call counts: the others met a busy host).
TIMED_S = 0.15
CHANNELS = 4
CHILD_TIMEOUT_S = 120


def calibration_ops() -> tuple[ColorOp, ImageOp]:
    """A colour op and a filter: the two kinds of work cost.py rates apart (a CDL's pows, a blur's taps)."""
    return Cdl(slope=(1.1, 1.0, 0.9), offset=(0.01, 0.0, -0.01), power=(1.2, 1.0, 0.8), sat=0.9), Blur(5.0)


@dataclass
class Calibration:
    """The cache entry for this host (see rates_file) and what could not be measured."""

    entry: dict[str, Any]
    problems: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        return "host" in self.entry


def calibrate(progress: Callable[[str], None] = lambda line: None) -> Calibration:
    """Measure the host backend and every device of each other registered backend, each in a fresh process
    (`child`) whose start-up is what any oxi process pays; `progress` hears what is being measured. Never raises:
    a device that fails goes to `problems` and is left out, and without the host's rates nothing is worth
    caching."""
    t0 = time.perf_counter()
    entry: dict[str, Any] = {"key": rates_file.host_key(), "measured_at": datetime.now().isoformat(timespec="seconds"),
                             "devices": {}}
    result = Calibration(entry)
    host = registry.kind(registry.HOST)
    progress(f"{host.title} ({cores()} threads)")
    try:
        entry["host"] = _measure(host.name, None)
    except ChildFailed as e:  # a broken Numba: nothing measured, nothing cached
        result.problems.append(f"{host.title} could not be measured: {e}")
        return result
    for kind in registry.with_devices():
        entry["devices"][kind.name] = _measure_devices(kind, entry["host"]["start_s"], progress, result.problems)
    entry["seconds"] = round(time.perf_counter() - t0, 3)
    return result


def _measure_devices(kind: registry.BackendKind, host_start_s: float, progress: Callable[[str], None],
                     problems: list[str]) -> dict[str, Any]:
    """A backend's devices, each measured, and which of those measured `auto` and the backend forced open."""
    noun = kind.device_noun
    try:
        devices, auto, forced = kind.list_devices()
    except Exception as e:  # no library, no loader: the host's rates still count
        problems.append(f"no {noun} measured: {type(e).__name__}: {e}")
        devices, auto, forced = [], None, None
    measured = []
    for device in devices:
        what = f"{noun} {device['index']} ({device['name']})"
        progress(what)
        try:
            record = _measure(kind.name, device["index"])
        except ChildFailed as e:  # one device failing to open or run leaves the others measured
            problems.append(f"{what} could not be measured: {e}")
            continue
        record["extra_start_s"] = max(0.0, record["start_s"] - host_start_s)
        measured.append({**device, **record})
    indices = {r["index"] for r in measured}
    return {"list": measured, "auto": auto if auto in indices else None, "any": forced if forced in indices else None}


class ChildFailed(Exception):
    """A measuring process that crashed, timed out or said nothing; the message is one line."""


def _measure(kind: str, index: int | None) -> dict[str, Any]:
    """The child's rates and `start_s`: a process's wall time, timed from here, less the time it spent measuring
    rates, so the start includes importing, opening, the first run, and the process's exit; Python's own start
    and numpy are in every backend's start alike, so differences between backends are what count. A second,
    start-only process gives a second sample and the faster counts: single starts varied 0.2-1.0 s apart on a
    16-core host with an H100 GPU (the measuring process also frees hundreds of MB at exit)."""
    doc = _child(kind, index, "measure")
    samples = [] if doc.pop("compiled") else [doc]  # a first run that compiled kernels says nothing of later ones
    samples.append(_child(kind, index, "start"))
    best = min(samples, key=lambda sample: sample["start_s"])
    doc.update({key: best[key] for key in ("start_s", "open_s", "kernels_s")})
    return doc


def _child(kind: str, index: int | None, mode: str) -> dict[str, Any]:
    root = str(Path(oxi_cli.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    code = "from oxi_cli.backends.calibrate import child; child()"
    t0 = time.perf_counter()
    try:
        res = subprocess.run([sys.executable, "-c", code, kind, str(index), mode], capture_output=True, text=True,
                             timeout=CHILD_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise ChildFailed(f"no answer within {CHILD_TIMEOUT_S} s") from None
    wall = time.perf_counter() - t0
    try:
        doc = json.loads(res.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = (res.stderr.strip().splitlines() or ["no output"])[-1]
        raise ChildFailed(f"the measuring process failed (exit {res.returncode}): {tail[:200]}") from None
    if "error" in doc:
        raise ChildFailed(doc["error"])
    doc["start_s"] = wall - doc.pop("measuring_s")
    return doc


def child(argv: Sequence[str] | None = None) -> None:
    """The measuring process: open the backend and run the calibration ops once on a 2x2 image, as a job's
    warm-up does (timed), then, in "measure" mode, its rates; print one JSON line. numpy and the ops are
    imported before the clock starts (every oxi process pays for them, whichever backend it opens)."""
    kind, index, mode = (argv or sys.argv)[1:4]
    try:
        t0 = time.perf_counter()
        backend, sync, sizes = _open(kind, index)
        t1 = time.perf_counter()
        first_run(backend)
        t2 = time.perf_counter()
        doc: dict[str, Any] = {"open_s": t1 - t0, "kernels_s": t2 - t1, "compiled": _compiled()}
        if mode == "measure":
            doc.update(_host_rates(backend, sync, sizes) if kind == registry.HOST else
                       _device_rates(backend, sync, sizes))
        doc["measuring_s"] = time.perf_counter() - t2
    except Exception as e:  # reported by the parent as one line
        doc = {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}
    print(json.dumps(doc), flush=True)


def _open(kind: str, index: str) -> tuple[Any, Callable[[], None], Sequence[tuple[int, int]]]:
    """The backend as a job opens it (the host's with every core, waiting for its kernels: their rates count,
    not their stand-ins'), what waits for its queued work, and the sizes its rates are measured at."""
    if kind == registry.HOST:
        backend = registry.kind(kind).open(None, cores())
        backend.wait_for_kernels = True  # its own setting, not this process's environment
        return backend, backend.finish, CPU_SIZES
    backend = registry.kind(kind).open(int(index), None)
    return backend, backend.finish, SIZES


def _compiled() -> bool:
    """Whether one of oxi's Numba kernels compiled in this process instead of loading from Numba's cache, by the
    dispatchers' own counts (comparing cache files' times with the clock missed a 7 s compile on a 16-core host with
    an H100 GPU)."""
    if "numba" not in sys.modules:  # a GPU process
        return False
    from numba.core.dispatcher import Dispatcher

    return any(isinstance(value, Dispatcher) and value.stats.cache_misses
               for name, module in list(sys.modules.items()) if name.startswith("oxi_cli.")
               for value in list(vars(module).values()))


def _host_rates(backend: Any, sync: Callable[[], None], sizes: Sequence[tuple[int, int]]) -> dict[str, Any]:
    threads = backend.threads
    ops = _op_rates(backend, sync, sizes)
    return {"threads": threads, "flops_per_core": ops["image"] / threads,
            "color_flops_per_core": ops["color"] / threads}


def _device_rates(backend: Any, sync: Callable[[], None], sizes: Sequence[tuple[int, int]]) -> dict[str, Any]:
    def upload(w: int, h: int) -> tuple[Callable[[], Any], float]:
        planes = _planes(w, h)
        return lambda: backend.upload(planes, half=True), sum(p.nbytes for p in planes)

    def download(w: int, h: int) -> tuple[Callable[[], Any], float]:
        planes = _planes(w, h)
        handle = backend.upload(planes, half=True)
        return lambda: backend.download_planes(handle, np.float16), sum(p.nbytes for p in planes)

    ops = _op_rates(backend, sync, sizes)
    return {"upload_bps": _rate(upload, sync, sizes), "download_bps": _rate(download, lambda: None, sizes),
            "flops": ops["image"], "color_flops": ops["color"]}


def _op_rates(backend: Any, sync: Callable[[], None], sizes: Sequence[tuple[int, int]]) -> dict[str, float]:
    """Float operations per second of the calibration colour op and filter, run through the backend protocol:
    {"color": ..., "image": ...}."""

    def runner(op: ColorOp | ImageOp) -> Callable[[int, int], tuple[Callable[[], Any], float]]:
        def make(w: int, h: int) -> tuple[Callable[[], Any], float]:
            src = backend.upload(_planes(w, h), half=True)
            if isinstance(op, ImageOp):
                dst = backend.allocate(*reversed(op.out_size(w, h)), CHANNELS)
                return lambda: backend.spatial(src, dst, op), op.work(w, h, CHANNELS)
            dst = backend.allocate(h, w, CHANNELS, half=True)
            return lambda: backend.color_chain(src, dst, [op], True), op.work(w, h, CHANNELS)

        return make

    color, image = calibration_ops()
    return {"color": _rate(runner(color), sync, sizes), "image": _rate(runner(image), sync, sizes)}


def _rate(
    make: Callable[[int, int], tuple[Callable[[], Any], float]],
    sync: Callable[[], None],
    sizes: Sequence[tuple[int, int]],
) -> float:
    """Amount per second that more work costs a call of `make(w, h)`'s function (which does that amount): the
    slope from the smallest of `sizes` to the first size whose calls take LONG_ENOUGH_S and SLOPE_SPAN times the
    smallest's (or the last), so what every call costs whatever its size is left out. A size is judged by its
    fastest call, never by its first (which builds what later calls reuse); where even the last size's calls
    are not SLOPE_FLOOR times the smallest's, the difference is too small to trust and the amount over the time
    stands instead."""
    base: tuple[float, float] | None = None
    for w, h in sizes:
        run, amount = make(w, h)
        seconds = _fastest(run, sync, _timed(run, sync, 1))
        if base is None:
            base = amount, seconds
            continue
        if (seconds >= LONG_ENOUGH_S and seconds >= SLOPE_SPAN * base[1]) or (w, h) == sizes[-1]:
            if seconds >= SLOPE_FLOOR * base[1]:
                return (amount - base[0]) / (seconds - base[1])
            return amount / seconds
    raise AssertionError("unreachable: the last size always returns")


def _fastest(run: Callable[[], Any], sync: Callable[[], None], first: float) -> float:
    """Seconds per call, the fastest of batches of calls repeated for about TIMED_S, at least one batch after
    `first` (a size's first call may build what later calls reuse: in `oxi probe --calibrate` on a 16-core host
    with an H200 GPU a blur's first 4096x2160 call took 0.5 s, beyond TIMED_S, and was all that was timed)."""
    best, spent, batches = first, first, 0
    while spent < TIMED_S or not batches:
        n = max(1, min(8, int((TIMED_S - spent) / best)))
        took = _timed(run, sync, n)
        best, spent, batches = min(best, took / n), spent + took, batches + 1
    return best


def _timed(run: Callable[[], Any], sync: Callable[[], None], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        run()
    sync()
    return time.perf_counter() - t0


@functools.lru_cache(maxsize=len(SIZES))
def _planes(width: int, height: int) -> tuple[np.ndarray, ...]:
    """RGBA half planes in (0, 1]: pows and blurs see ordinary pixel values, not zeros."""
    rng = np.random.default_rng(width * height)
    plane = (rng.random((height, width), dtype=np.float32) * 0.99 + 0.01).astype(np.float16)
    return (plane,) * CHANNELS


def first_run(backend: Any) -> None:
    """The calibration ops once on a 2x2 half image, downloaded as half, as a job's warm-up runs its chain:
    kernels load (or compile, and are cached for the start-up run) and pipelines build."""
    planes = [np.ones((2, 2), np.float16)] * CHANNELS
    for op in calibration_ops():
        src = backend.upload(planes, half=True)
        if isinstance(op, ImageOp):
            dst = backend.allocate(2, 2, CHANNELS)
            backend.spatial(src, dst, op.sample())
        else:
            dst = backend.allocate(2, 2, CHANNELS, half=True)
            backend.color_chain(src, dst, [op], True)
        backend.download_planes(dst, np.float16)
