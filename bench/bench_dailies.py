"""Dailies: EXR frames -> ACES 2.0 SDR -> a ProRes 422 HQ movie, oxi in one command against oiiotool + ffmpeg.

    python bench/bench_dailies.py [--frames 100] [--width 1920 --height 1080] [--runs 1] [--backend auto]
                                  [--ffmpeg PATH] [--json FILE]

Issue #37's figure. Frames: half RGBA ZIP EXRs of a synthetic plate (soft gradients, a slow wave and film-like
grain, different every frame). oxi: `oxi display 'plate.####.exr' -o review.mov` (frames streamed into the
encoder, tags written). The usual script: `oiiotool --frames 1-N plate.#.exr --ociodisplay ... -d uint8 -o
png/plate.#.png` (all threads, --parallel-frames), then `ffmpeg -framerate 24 -i png/plate.%04d.png -c:v prores_ks
-profile:v 3 -pix_fmt yuv422p10le review.mov` (Debian's ffmpeg when it is on PATH, else the same encode through
PyAV's own FFmpeg libraries, said in the table). Both use OCIO's built-in studio config. oxi's kernels are
compiled by an untimed two-frame run first (a one-time cost per machine, `oxi probe --compile`). Figures are
wall seconds (median of --runs) and frames per second.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import oiiotool_command, print_table, run_once, tool_version, write_json  # noqa: E402

CONFIG = "ocio://studio-config-latest"
DISPLAY, VIEW = "Rec.1886 Rec.709 - Display", "ACES 2.0 - SDR 100 nits (Rec.709)"
PYAV_ENCODE = """
import sys, av
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with av.open(src, format="image2", options={"framerate": "24", "start_number": "1"}) as inp, av.open(dst, "w") as out:
    s = out.add_stream("prores_ks", rate=24, options={"profile": "3", "vendor": "apl0"})
    s.pix_fmt = "yuv422p10le"
    s.codec_context.thread_type = "AUTO"
    for i, frame in enumerate(inp.decode(video=0)):
        if i == 0:
            s.width, s.height = frame.width, frame.height
        frame = frame.reformat(format="yuv422p10le")
        frame.pts = i
        for p in s.encode(frame):
            out.mux(p)
    for p in s.encode():
        out.mux(p)
"""


def make_frames(folder: Path, count: int, width: int, height: int) -> str:
    import OpenEXR

    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    base = np.stack([0.02 + 0.6 * xx / width, 0.03 + 0.4 * yy / height, 0.05 + 0.2 * (1 - xx / width)], axis=-1)
    rng = np.random.default_rng(37)
    for f in range(1, count + 1):
        wave = 0.08 * np.sin(xx / 37.0 + f * 0.2)[..., None]
        grain = rng.normal(0.0, 0.01, (height, width, 3)).astype(np.float32)
        rgb = np.maximum(base * (1.0 + 0.01 * f) + wave + grain, 0.0)
        rgba = np.concatenate([rgb, np.ones((height, width, 1), np.float32)], axis=-1).astype(np.float16)
        header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}
        OpenEXR.File(header, {"RGBA": rgba}).write(str(folder / f"plate.{f:04d}.exr"))
    return str(folder / "plate.####.exr")


def oxi_command(pattern: str, movie: Path, backend: str, *more: str) -> list[str]:
    return [sys.executable, "-m", "oxi_cli", "display", pattern, "-o", str(movie), "--from", "ACEScg", "--display",
            DISPLAY, "--view", VIEW, "--config", CONFIG, "--backend", backend, "--overwrite", "-q", *more]


def encoder(ffmpeg: str | None) -> tuple[str, list[str]]:
    """The encoding half of the usual script: ffmpeg's command, or PyAV's own libraries doing the same."""
    found = ffmpeg or shutil.which("ffmpeg")
    if found:
        return f"ffmpeg {tool_version([found, '-version']).split()[2]}", [found]
    import av

    return f"PyAV {av.__version__} (FFmpeg libraries; no ffmpeg binary)", []


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=100)
    p.add_argument("--width", type=int, default=1920)
    p.add_argument("--height", type=int, default=1080)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--backend", default="auto")
    p.add_argument("--ffmpeg", help="the ffmpeg binary (default: ffmpeg on PATH, else PyAV)")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    oiiotool = oiiotool_command()
    if oiiotool is None:
        print("oiiotool not found: pip install openimageio", file=sys.stderr)
        return 2
    enc_label, enc_cmd = encoder(args.ffmpeg)
    env = {**os.environ, "OXI_SERVER": "off", "OXI_OVERWRITE": "1"}
    work = Path(tempfile.mkdtemp(prefix="oxi-dailies-"))
    try:
        pattern = make_frames(work, args.frames, args.width, args.height)
        run_once(oxi_command(pattern, work / "warm.mov", args.backend, "--frames", "1-2"), env)  # kernels, untimed
        times: dict[str, list[float]] = {"oxi": [], "oiiotool": [], "encode": []}
        for _ in range(args.runs):
            times["oxi"].append(run_once(oxi_command(pattern, work / "oxi.mov", args.backend), env).wall_s)
            (work / "png").mkdir(exist_ok=True)
            times["oiiotool"].append(run_once([
                *oiiotool, "--colorconfig", CONFIG, "--frames", f"1-{args.frames}", "--parallel-frames",
                str(work / "plate.#.exr"), "--iscolorspace", "ACEScg", "--ociodisplay", DISPLAY, VIEW, "-d", "uint8",
                "-o", str(work / "png" / "plate.#.png")]).wall_s)
            png = str(work / "png" / "plate.%04d.png")
            cmd = ([*enc_cmd, "-y", "-loglevel", "error", "-framerate", "24", "-i", png, "-c:v", "prores_ks",
                    "-profile:v", "3", "-vendor", "apl0", "-pix_fmt", "yuv422p10le", str(work / "ffmpeg.mov")]
                   if enc_cmd else [sys.executable, "-c", PYAV_ENCODE, png, str(work / "ffmpeg.mov"),
                                    str(args.frames)])
            times["encode"].append(run_once(cmd).wall_s)
        med = {k: float(np.median(v)) for k, v in times.items()}
        script = med["oiiotool"] + med["encode"]
        n = args.frames
        rows = [
            [f"oxi display -o review.mov ({args.backend})", f"{med['oxi']:.1f}", f"{n / med['oxi']:.1f}",
             f"{script / med['oxi']:.2f}x"],
            ["oiiotool -> PNG, 8-bit", f"{med['oiiotool']:.1f}", f"{n / med['oiiotool']:.1f}", ""],
            [f"{enc_label}: PNG -> ProRes 422 HQ", f"{med['encode']:.1f}", f"{n / med['encode']:.1f}", ""],
            ["oiiotool + encode (the usual script)", f"{script:.1f}", f"{n / script:.1f}", "1.00x"],
        ]
        title = (f"{n} frames {args.width}x{args.height} half RGBA EXR (ZIP) -> ACES 2.0 SDR -> ProRes 422 HQ, "
                 f"{os.cpu_count()} CPUs, median of {args.runs}")
        print_table(title, ["pipeline", "seconds", "frames/s", "oxi's speed-up"], rows)
        if args.json:
            write_json(args.json, {"frames": n, "width": args.width, "height": args.height, "seconds": med,
                                   "encoder": enc_label, "cpus": os.cpu_count()})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
