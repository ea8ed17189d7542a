"""An OCIO display view (ACES 2.0 SDR by default) of a plate in memory: oxi's CPU and GPU backends against OCIO's.

    python bench/bench_display.py [--width 8192 --height 4320] [--runs 3] [--threads N] [--device N]
                                  [--config URI] [--source ACEScg] [--display D] [--view V] [--json FILE]

Issue #11 asks for the GPU backend against the CPU backend on the ACES 2.0 display view of an 8K plate in memory.
Each figure is the median wall time of the whole colour chain OCIO's optimised processor becomes, on RGBA float32
holding HDR values, negatives, NaN and Inf: OCIO's CPU processor (one thread per band over --threads bands, as
oxi's fallback runs it), oxi's CPU backend (--threads), oxi's GPU kernels on resident buffers, and the GPU with
the float32 upload and download. The worst difference to OCIO is printed beside each oxi figure.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, timed, write_json  # noqa: E402


def plate(width: int, height: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    img = rng.lognormal(-1.0, 1.5, (height, width, 4)).astype(np.float32)
    img[..., :3] *= rng.choice(np.float32([1, 1, 1, -0.1]), (height, width, 3))
    flat = img.reshape(-1, 4)
    flat[rng.integers(0, flat.shape[0], 64), rng.integers(0, 3, 64)] = np.nan
    flat[rng.integers(0, flat.shape[0], 64), rng.integers(0, 3, 64)] = np.inf
    img[..., 3] = 1.0
    return img


def worst(a: np.ndarray, b: np.ndarray) -> float:
    both = np.isfinite(a) & np.isfinite(b)
    return float(np.max(np.abs(a[both] - b[both]))) if both.any() else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--width", type=int, default=8192)
    p.add_argument("--height", type=int, default=4320)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--device", type=int)
    p.add_argument("--config", default="ocio://studio-config-latest")
    p.add_argument("--source", default="ACEScg")
    p.add_argument("--display", default="sRGB - Display")
    p.add_argument("--view", default="ACES 2.0 - SDR 100 nits (Rec.709)")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)

    from oxi_cli.backends.cpu.backend import CpuBackend
    from oxi_cli.formats.ocio_config import Conversion, processor
    from oxi_cli.formats.ocio_steps import conversion_ops

    conversion = Conversion(args.source, display=args.display, view=args.view, config=args.config)
    ops = conversion_ops(conversion)
    img = plate(args.width, args.height)
    h, w, c = img.shape
    print(f"ops: {', '.join(op.name for op in ops)}", file=sys.stderr)

    cpu_proc = processor(conversion).getDefaultCPUProcessor()
    reference = img.copy()
    bands = np.array_split(np.arange(h), args.threads)

    def ocio_run(out: np.ndarray) -> None:
        np.copyto(out, img)
        with ThreadPoolExecutor(args.threads) as pool:
            list(pool.map(lambda rows: cpu_proc.applyRGBA(out[rows[0] : rows[-1] + 1]), bands))

    ocio_run(reference)
    rows = [["OCIO CPU processor, bands", f"{timed(lambda: ocio_run(reference), args.runs):.3f}", "", ""]]
    results: dict[str, Any] = {"ops": [op.name for op in ops], "ocio_s": float(rows[0][1])}

    cpu = CpuBackend(args.threads, wait_for_kernels=True)  # the kernels, never their stand-ins
    c_src, c_dst = cpu.upload(img.copy()), cpu.allocate(h, w, c)
    cpu.color_chain(c_src, c_dst, ops, True)  # compiles (or loads) the kernels
    cpu_s = timed(lambda: cpu.color_chain(c_src, c_dst, ops, True), args.runs)
    cpu_err = worst(cpu.download(c_dst), reference)
    rows.append(["oxi CPU backend", f"{cpu_s:.3f}", f"{results['ocio_s'] / cpu_s:.1f}", f"{cpu_err:.2e}"])
    results.update(cpu_s=cpu_s, cpu_worst=cpu_err)

    try:
        from oxi_cli.backends.gpu.backend import WgpuBackend

        gpu = WgpuBackend(args.device)
    except Exception as e:  # noqa: BLE001 - no GPU here: the table says so
        print(f"no GPU: {e}", file=sys.stderr)
        gpu = None
    if gpu is not None:
        g_src, g_dst = gpu.upload(img), gpu.allocate(h, w, c)
        out = np.empty_like(img)

        def kernels() -> None:
            gpu.color_chain(g_src, g_dst, ops, True)
            gpu.finish()

        def whole() -> None:
            src = gpu.upload(img)
            gpu.color_chain(src, g_dst, ops, True)
            gpu.download(g_dst, out)

        kernels()
        k_s, t_s = timed(kernels, args.runs), timed(whole, args.runs)
        gpu_err = worst(gpu.download(g_dst), reference)
        rows.append(["oxi GPU, kernels", f"{k_s:.4f}", f"{results['ocio_s'] / k_s:.1f}", f"{gpu_err:.2e}"])
        rows.append(["oxi GPU, with upload and download", f"{t_s:.3f}", f"{results['ocio_s'] / t_s:.1f}", ""])
        results.update(gpu_kernels_s=k_s, gpu_with_transfers_s=t_s, gpu_worst=gpu_err,
                       cpu_over_gpu_kernels=cpu_s / k_s, cpu_over_gpu_with_transfers=cpu_s / t_s)
    print_table(
        f"{args.source} -> {args.display} / {args.view}, {w}x{h} RGBA float32 in memory, {args.threads} threads, "
        f"median of {args.runs}",
        ["path", "s", "× OCIO", "worst |Δ| vs OCIO"],
        rows,
    )
    if args.json:
        write_json(args.json, {"width": w, "height": h, "threads": args.threads, **results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
