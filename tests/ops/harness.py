"""Run an op on a backend and OpenColorIO on the same pixels; compare, reporting the offending pixels."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import PyOpenColorIO as OCIO

# float32's smallest normal number: a kernel that flushes denormals to zero is off by at most this much.
FLT_MIN = float(np.finfo(np.float32).tiny)


def run_color(backend: Any, img: np.ndarray, method: str, op: Any, *args: Any, inplace: bool = True) -> np.ndarray:
    """The colour op `method` names as a chain of one (as the executor runs it) on a copy of img; dst is src
    when `inplace`; args: (has_alpha,) for a matrix."""
    src = backend.upload(img.copy())  # upload may adopt the array; keep the caller's input pristine
    dst = src if inplace else backend.allocate(*img.shape)
    assert op.name == method
    backend.color_chain(src, dst, [op], bool(args[0]) if args else False)
    return np.array(backend.download(dst), dtype=np.float32, copy=True)


def assert_separate_destination_matches_in_place(
    backend: Any, img: np.ndarray, method: str, op: Any, *args: Any
) -> None:
    """A colour op into a fresh destination gives what it gives in place, untouched channels included."""
    assert_bits_equal(
        run_color(backend, img, method, op, *args, inplace=False),
        run_color(backend, img, method, op, *args, inplace=True),
        f"{method} into a separate destination vs in place",
    )


def run_spatial(backend: Any, img: np.ndarray, method: str, op: Any, out_hw: tuple[int, int]) -> np.ndarray:
    """The image op `method` names into a freshly allocated (out_h, out_w, C) destination."""
    src = backend.upload(img.copy())
    dst = backend.allocate(out_hw[0], out_hw[1], img.shape[2])
    assert op.name == method
    backend.spatial(src, dst, op)
    out = np.array(backend.download(dst), dtype=np.float32, copy=True)
    assert out.shape == (*out_hw, img.shape[2]), f"output shape {out.shape}, expected {(*out_hw, img.shape[2])}"
    return out


def ocio_cpu(transform: Any, optimization: Any = OCIO.OPTIMIZATION_LOSSLESS) -> Any:
    """A float32 CPU processor; LOSSLESS because the default uses a fast pow (~2.5e-5 relative error)."""
    return OCIO.Config.CreateRaw().getProcessor(transform).getOptimizedCPUProcessor(optimization)


def ocio_apply(processor: Any, img: np.ndarray, rgba: bool = False) -> np.ndarray:
    """OCIO on an (H, W, C) float32 image: applyRGBA on channels 0..3 if `rgba`, else applyRGB on 0..2.

    Channels OCIO is not given are copied from the input unchanged.
    """
    out = img.astype(np.float32, copy=True)
    n = 4 if rgba else 3
    px = np.ascontiguousarray(out[..., :n]).reshape(-1, n)
    (processor.applyRGBA if rgba else processor.applyRGB)(px)
    out[..., :n] = px.reshape(*img.shape[:-1], n)
    return out


def write_cube(
    path: Path,
    rows: np.ndarray,
    *,
    dims: int,
    lo: Sequence[float] = (0, 0, 0),
    hi: Sequence[float] = (1, 1, 1),
) -> Path:
    """A .cube file of a 3D LUT (`dims=3`, N³ rows, red fastest) or a 1D LUT (`dims=1`, N rows); values have
    9 significant digits so OCIO reads back exactly the float32 numbers our op gets.

    OCIO caches files by path: give every distinct LUT its own file name.
    """
    n = round(rows.shape[0] ** (1 / dims))
    assert n**dims == rows.shape[0], f"{rows.shape[0]} rows is not a {dims}D LUT"
    header = f"LUT_{dims}D_SIZE {n}"
    with open(path, "w") as f:
        f.write(f'TITLE "oxi test"\n{header}\nDOMAIN_MIN {lo[0]!r} {lo[1]!r} {lo[2]!r}\n')
        f.write(f"DOMAIN_MAX {hi[0]!r} {hi[1]!r} {hi[2]!r}\n")
        np.savetxt(f, np.asarray(rows, dtype=np.float32), fmt="%.9g")
    return path


def ocio_file(path: Path, interp: Any) -> Any:
    """CPU processor for a LUT file with the given OCIO interpolation."""
    t = OCIO.FileTransform()
    t.setSrc(str(path))
    t.setInterpolation(interp)
    return ocio_cpu(t)


def _describe(idx: tuple[int, ...], inputs: np.ndarray | None, shape: tuple[int, ...]) -> str:
    """The input pixel behind an output value, when input and output have the same pixel grid."""
    if inputs is None or inputs.shape[:-1] != shape[:-1]:
        return ""
    return f" (input pixel {[float(f'{v:.9g}') for v in inputs[idx[:-1]]]})"


# The worst error each test saw, by test (parameters folded together), for `pytest --error-figures`: the
# figures quoted in notes and docs are the ones these checks measure. Relative checks record |Δ| over the
# check's own scale, max(|want|, scale); absolute ones record |Δ|.
WORST: dict[str, tuple[float, str]] = {}


def _record(
    err: np.ndarray, want: np.ndarray, scale: np.ndarray | float, rtol: float, both: np.ndarray, figure: str | None
) -> None:
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0].split("[")[0]
    if figure:  # one figure per transform of a test that checks many
        test = f"{test} {figure}"
    if rtol:
        denom = np.maximum(np.maximum(np.abs(want), scale), FLT_MIN)
        measure, kind = np.where(both, err / denom, 0.0), "relative"
    else:
        measure, kind = err, "absolute"
    worst = float(measure.max()) if measure.size else 0.0
    if worst >= WORST.get(test, (-1.0, ""))[0]:
        WORST[test] = (worst, kind)


def assert_close(
    got: np.ndarray,
    want: np.ndarray,
    *,
    rtol: float,
    scale: np.ndarray | float = 0.0,
    atol: float = 0.0,
    inputs: np.ndarray | None = None,
    what: str = "",
    worst: int = 5,
    figure: str | None = None,
) -> None:
    """|got - want| <= rtol * max(|want|, scale) + atol for finite `want`; non-finite values must match.
    `figure` files the worst error under "<test> <figure>" (`--error-figures` lists each transform).

    NaN must sit exactly where `want` has NaN; +Inf / -Inf exactly where `want` has them. On failure the
    message lists the worst offenders with their index, the input pixel, the expected and the got value.
    """
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != expected {want.shape}"
    problems: list[str] = []

    finite = np.isfinite(want)
    mismatch = (np.isnan(want) != np.isnan(got)) | ((np.isinf(want) | np.isinf(got)) & (got != want))
    for idx in np.argwhere(mismatch)[:worst]:
        t = tuple(int(i) for i in idx)
        problems.append(f"  at {t}: expected {want[t]:.9g}, got {got[t]:.9g}{_describe(t, inputs, want.shape)}")
    if mismatch.any():
        problems.insert(0, f"{int(mismatch.sum())} non-finite mismatches (NaN/Inf positions differ):")

    with np.errstate(invalid="ignore"):  # 0 * Inf where want is infinite: those positions were checked above
        allowed = rtol * np.maximum(np.abs(want), scale) + atol
    # A NaN allowance would make every comparison below pass silently: that is a broken reference.
    assert not np.isnan(allowed[finite]).any(), f"{what}: the reference's error scale is NaN"
    both = finite & np.isfinite(got)  # the rest was reported as a non-finite mismatch above
    with np.errstate(invalid="ignore"):
        err = np.where(both, np.abs(got - want), 0.0)
    _record(err, want, scale, rtol, both, figure)
    bad = err > allowed
    if bad.any():
        ratio = np.where(bad, err / np.where(allowed > 0, allowed, FLT_MIN), 0.0)
        order = np.argsort(ratio, axis=None)[::-1][:worst]
        problems.append(
            f"{int(bad.sum())} of {int(finite.sum())} finite values off by more than {rtol:g} relative"
            f" (worst {float(ratio.max()):.3g}x the allowance):"
        )
        for flat in order:
            t = tuple(int(i) for i in np.unravel_index(flat, want.shape))
            problems.append(
                f"  at {t}: expected {want[t]:.9g}, got {got[t]:.9g}, |err| {err[t]:.3g} > allowed"
                f" {allowed[t]:.3g}{_describe(t, inputs, want.shape)}"
            )
    assert not problems, f"{what}\n" + "\n".join(problems)


def assert_bits_equal(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Bit-for-bit equality of float32 data (NaN payloads and signed zeros included)."""
    g = np.ascontiguousarray(got, dtype=np.float32).view(np.uint32)
    w = np.ascontiguousarray(want, dtype=np.float32).view(np.uint32)
    diff = np.argwhere(g != w)
    if diff.size:
        t = tuple(int(i) for i in diff[0])
        raise AssertionError(
            f"{what}: {len(diff)} values changed, first at {t}: expected {want[t]:.9g}, got {got[t]:.9g}"
        )


def max_error(got: np.ndarray, want: np.ndarray, scale: np.ndarray | float = 0.0) -> float:
    """Largest |got - want| / max(|want|, scale) over values finite in both (for reporting figures)."""
    both = np.isfinite(want) & np.isfinite(got)
    denom = np.maximum(np.maximum(np.abs(want), scale), FLT_MIN)
    return float((np.abs(got - want) / denom)[both].max(initial=0.0))
