"""Resize every part of a folder of EXRs with oxi and with oiiotool and count the parts whose windows and pixels
match (issue 38): `python bench/bench_windows.py FOLDER [--scale 50%] [--backend cpu] [--json]`.

FOLDER is typically the public openexr-images collection (github.com/AcademySoftwareFoundation/openexr-images,
its EXRs outside Damaged/). Both tools resize with lanczos3 and write ZIP (a lossy codec kept from the input would
add its own error); each output is read back with OpenImageIO. A part
matches in geometry when its data and display windows are oiiotool's, in pixels when every channel lies within
5e-4 of max(1, 1.3 x the largest |input| the filter reaches) plus one half-float step of oiiotool's (oiiotool's
own float32 taps lie up to 4.2e-4 of sum |w| |v| from the float64 resize: tests/cli/test_fit_modes.py).
Files oxi refuses (deep, mip-mapped, subsampled) are listed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, oiiotool_command, print_table  # noqa: E402

RTOL = 5e-4


@dataclass
class PartResult:
    file: str
    part: int
    geometry: bool
    pixels: bool
    worst: float
    oxi_windows: str
    oiio_windows: str


def _parts(path: Path) -> list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, np.ndarray]]]:
    """Each part's channel names, data and display windows (x, y, w, h) and float pixels, read by OIIO."""
    import OpenImageIO as oiio

    found = []
    inp = oiio.ImageInput.open(str(path))
    if inp is None:
        raise RuntimeError(oiio.geterror())
    count = 0
    while inp.seek_subimage(count, 0):
        count += 1
    inp.close()
    for s in range(count):
        buf = oiio.ImageBuf(str(path), s, 0)
        spec = buf.spec()
        pixels = buf.get_pixels(oiio.FLOAT)
        planes = {name: pixels[..., i] for i, name in enumerate(spec.channelnames)}
        found.append((spec.channelnames, (spec.x, spec.y, spec.width, spec.height),
                      (spec.full_x, spec.full_y, spec.full_width, spec.full_height), planes))
    return found


def _local_max(plane: np.ndarray, data: tuple[int, ...], display: tuple[int, ...], out: tuple[int, ...],
               out_display: tuple[int, ...]) -> np.ndarray:
    """Per output pixel, the largest |value| of the input pixels its filter reaches (the scale of oiiotool's
    float32 rounding: it lies within 4.2e-4 of sum |w| |v|, and sum |w| < 1.3 for lanczos3)."""
    mag = np.nan_to_num(np.abs(plane.astype(np.float64)), posinf=0.0)
    for axis in (0, 1):
        i = 1 - axis  # windows are (x, y, w, h): axis 0 (rows) is y
        ratio = display[2 + i] / out_display[2 + i]
        reach = 3.0 * max(1.0, ratio) + 1
        centre = display[i] + (out[i] + np.arange(out[2 + i]) - out_display[i] + 0.5) * ratio - 0.5 - data[i]
        lo = np.clip(np.floor(centre - reach), 0, data[2 + i] - 1).astype(int)
        hi = np.clip(np.ceil(centre + reach) + 1, 1, data[2 + i]).astype(int)
        moved = np.moveaxis(mag, axis, 0)
        picked = np.stack([moved[a:max(a + 1, b)].max(axis=0) for a, b in zip(lo, hi, strict=True)])
        mag = np.moveaxis(picked, 0, axis)
    return mag


def _worst(got: dict[str, np.ndarray], want: dict[str, np.ndarray], scale: dict[str, np.ndarray]) -> float:
    """The largest error as a multiple of the tolerance (<= 1 matches); inf when the channels differ."""
    if set(got) != set(want):
        return float("inf")
    worst = 0.0
    for name, w in want.items():
        g = got[name]
        if g.shape != w.shape:
            return float("inf")
        both_nan = np.isnan(g) & np.isnan(w)
        same_inf = np.isinf(w) & (g == w)
        with np.errstate(invalid="ignore", over="ignore"):
            big = np.maximum(np.abs(g), np.abs(w)).astype(np.float16)
            step = np.spacing(big).astype(np.float64)
            tol = RTOL * np.maximum(1.0, 1.3 * scale[name]) + np.where(np.isfinite(step), step, 0.0)
            err = np.abs(g.astype(np.float64) - w) / tol
        err = np.where(both_nan | same_inf, 0.0, err)
        if err.size:
            worst = max(worst, float(np.nan_to_num(err, nan=np.inf).max()))
    return worst


def compare(path: Path, root: Path, work: Path, scale: str, backend: str) -> list[PartResult] | str:
    """oxi and oiiotool on one file: per part, or the reason oxi (or oiiotool) gave none."""
    ours, theirs = work / "oxi.exr", work / "oiio.exr"
    for p in (ours, theirs):
        p.unlink(missing_ok=True)
    # Both write ZIP: a lossy input codec (B44, DWA) kept on output would add its own error to the comparison.
    res = subprocess.run([sys.executable, "-m", "oxi_cli", "resize", str(path), str(ours), "--scale", scale,
                          "--backend", backend, "--compression", "zip", "--overwrite", "--quiet"],
                         capture_output=True, text=True, cwd=REPO)
    if res.returncode != 0:
        return "oxi: " + (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1]
    tool = oiiotool_command()
    assert tool is not None
    res = subprocess.run([*tool, "-a", str(path), "--resize:filter=lanczos3", scale, "--compression", "zip", "-o",
                          str(theirs)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        return "oiiotool: " + (res.stderr.strip().splitlines() or ["failed"])[-1]
    got, want, source = _parts(ours), _parts(theirs), _parts(path)
    if len(got) != len(want):
        return f"{len(got)} parts from oxi, {len(want)} from oiiotool"
    out = []
    for i, (g, w, s) in enumerate(zip(got, want, source, strict=True)):
        geometry = g[1:3] == w[1:3]
        scale = {name: _local_max(plane, s[1], s[2], w[1], w[2]) for name, plane in s[3].items()}
        worst = _worst(g[3], w[3], scale) if geometry else float("inf")
        out.append(PartResult(str(path.relative_to(root)), i, geometry, worst <= 1.0, worst,
                              f"{g[1]} in {g[2]}", f"{w[1]} in {w[2]}"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--scale", default="50%")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--json", action="store_true", help="one JSON document instead of tables")
    args = parser.parse_args()
    if oiiotool_command() is None:
        print("needs oiiotool (pip install openimageio)", file=sys.stderr)
        return 2
    files = sorted(p for p in args.folder.rglob("*.exr") if "Damaged" not in p.parts)
    results: list[PartResult] = []
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            found = compare(path, args.folder, Path(tmp), args.scale, args.backend)
            if isinstance(found, str):
                skipped[str(path.relative_to(args.folder))] = found
            else:
                results.extend(found)
    by_file: dict[str, list[PartResult]] = {}
    for r in results:
        by_file.setdefault(r.file, []).append(r)
    summary = {
        "files": len(files),
        "files compared": len(by_file),
        "files matching (geometry)": sum(all(r.geometry for r in rs) for rs in by_file.values()),
        "files matching (geometry and pixels)": sum(all(r.pixels for r in rs) for rs in by_file.values()),
        "parts compared": len(results),
        "parts matching (geometry)": sum(r.geometry for r in results),
        "parts matching (geometry and pixels)": sum(r.pixels for r in results),
    }
    if args.json:
        print(json.dumps({"summary": summary, "parts": [asdict(r) for r in results], "not compared": skipped},
                         indent=1, default=str))
        return 0
    misses = [r for r in results if not r.pixels]
    if misses:
        print_table("parts that differ", ["file", "part", "geometry", "worst/tol", "oxi", "oiiotool"],
                    [[r.file, str(r.part), "same" if r.geometry else "differs", f"{r.worst:.3g}", r.oxi_windows,
                      r.oiio_windows] for r in misses])
    for name, why in skipped.items():
        print(f"not compared: {name}: {why}")
    print_table(f"oxi resize --scale {args.scale} against oiiotool --resize, every part", ["", "count"],
                [[k, str(v)] for k, v in summary.items()])
    return 0


if __name__ == "__main__":
    sys.exit(main())
