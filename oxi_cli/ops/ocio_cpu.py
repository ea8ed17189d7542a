"""OpenColorIO's own CPU processor run in bands on every core: for transforms oxi has no kernel for yet, and for
oxi's own colour ops while their kernels are not compiled (`for_ops`: each op as the OCIO transform it computes)."""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from oxi_cli import host
from oxi_cli.errors import OpError
from oxi_cli.ops.base import ColorOp, Encoded
from oxi_cli.ops.premult import repremultiply, unpremultiply

# Pixels per band: large enough that OCIO's per-call set-up vanishes, small enough that every core gets
# several bands and the interleaved copy stays in cache.
BAND_PIXELS = 1 << 16


class OcioCpu(ColorOp):
    """OCIO transforms kept as a CTF document: text, so the op pickles and every process rebuilds the same
    processor. Not a dataclass: reports show the transform types it covers, not the document."""

    name: ClassVar[str] = "ocio"

    def __init__(self, ctf: str, covers: Sequence[str] = (), alpha: bool = False, optimize: bool = True) -> None:
        if "<ProcessList" not in ctf:
            raise OpError("the OCIO fallback needs a CTF document (a ProcessList)")
        self.ctf = ctf
        self.covers = tuple(covers)
        self.alpha = alpha  # the transform reads and writes alpha: apply_on_host takes R, G, B, A
        # False: every transform as written (OCIO's optimiser drops identity steps, such as a CDL's saturation
        # of 1, which changes where NaN and Inf go); True: OCIO's lossless optimisation.
        self.optimize = optimize

    def __reduce__(self) -> tuple[Any, ...]:
        return OcioCpu, (self.ctf, self.covers, self.alpha, self.optimize)

    def __repr__(self) -> str:
        return f"OcioCpu({', '.join(self.covers)})"

    def runs_natively(self) -> bool:
        return False

    def encode(self, has_alpha: bool) -> Encoded:
        raise OpError(f"no oxi kernel runs {', '.join(self.covers)}; the executor applies it on the host")

    def touches_alpha(self) -> bool:
        return self.alpha

    def apply_on_host(self, rgb: Sequence[np.ndarray], threads: int | None = None) -> None:
        """Transform R, G, B (and A when `alpha`) planes in place, float32 or float16 (half results round to
        nearest, beyond half range to +-Inf, as the kernels store them). OCIO's apply releases the GIL: bands of
        interleaved pixels run on every core at once."""
        processor = _processor(self.ctf, self.optimize)
        channels = 4 if self.alpha else 3
        flat = [plane.reshape(-1) for plane in rgb[:channels]]
        total = flat[0].shape[0]
        apply = processor.applyRGBA if self.alpha else processor.applyRGB

        def band(start: int) -> None:
            stop = min(start + BAND_PIXELS, total)
            px = np.empty((stop - start, channels), np.float32)
            for c in range(channels):
                px[:, c] = flat[c][start:stop]
            apply(px)
            with np.errstate(over="ignore"):
                for c in range(channels):
                    flat[c][start:stop] = px[:, c]

        with ThreadPoolExecutor(threads or host.cores()) as pool:
            list(pool.map(band, range(0, total, BAND_PIXELS)))


@functools.lru_cache(maxsize=32)
def _processor(ctf: str, optimize: bool = True) -> Any:
    """The CPU processor of a CTF document. OCIO reads transforms from files only, so the text goes to a file
    in a folder of this process's own (mkdtemp: 0700, a new name), removed once the processor holds the ops: a
    shared temporary folder would let another user's file of the same name stand in for it."""
    import PyOpenColorIO as OCIO

    level = OCIO.OPTIMIZATION_LOSSLESS if optimize else OCIO.OPTIMIZATION_NONE
    with tempfile.TemporaryDirectory(prefix="oxi-ocio-") as folder:
        path = Path(folder) / "chain.ctf"
        path.write_text(ctf, encoding="utf-8")
        transform = OCIO.FileTransform(src=str(path))
        return OCIO.Config.CreateRaw().getProcessor(transform).getOptimizedCPUProcessor(level)


def covers(ops: Sequence[ColorOp]) -> bool:
    """Whether `for_ops` can stand in for every one of these ops."""
    return all(type(op).__name__ in TO_OCIO or type(op).__name__ in IN_NUMPY for op in ops)


def for_ops(ops: Sequence[ColorOp], has_alpha: bool) -> OcioCpu | HostSteps:
    """oxi colour ops as one OCIO processor computing the same (each op as its OCIO transform, `TO_OCIO`): what
    the CPU backend runs while their kernels compile. Agrees with oxi's kernels as closely as oxi's kernels
    agree with OCIO (tests/ops and tests/color); KeyError for an op with no OCIO equivalent. Ops OCIO has no
    transform for (`IN_NUMPY`: unpremultiply, re-premultiply) split the chain into steps run one after the other."""
    if any(type(op).__name__ in IN_NUMPY for op in ops):
        return HostSteps(ops, has_alpha)
    return _processor_for(ops, has_alpha)


def _processor_for(ops: Sequence[ColorOp], has_alpha: bool) -> OcioCpu:
    import PyOpenColorIO as OCIO

    group = OCIO.GroupTransform()
    for op in ops:
        for transform in TO_OCIO[type(op).__name__](OCIO, op):
            group.appendTransform(transform)
    ctf = group.write("Color Transform Format", OCIO.Config.CreateRaw())
    alpha = has_alpha and any(op.touches_alpha() for op in ops)
    return OcioCpu(ctf, tuple(op.name for op in ops), alpha, optimize=False)


class HostSteps:
    """A colour chain's stand-in with ops OCIO has no transform for: runs of the others on OCIO's CPU processor,
    those in NumPy, in order, on float32 copies of the planes (values stay float32 between ops, as in the
    kernels' chains), stored back once."""

    def __init__(self, ops: Sequence[ColorOp], has_alpha: bool) -> None:
        self.has_alpha = has_alpha
        self.steps: list[ColorOp | OcioCpu] = []
        run: list[ColorOp] = []
        for op in [*ops, None]:
            if op is not None and type(op).__name__ not in IN_NUMPY:
                run.append(op)
                continue
            if run:
                self.steps.append(_processor_for(run, has_alpha))
            run = []
            if op is not None:
                self.steps.append(op)

    def apply_on_host(self, planes: Sequence[np.ndarray], threads: int | None = None) -> None:
        """R, G, B (and A, read as alpha when the layer has it) planes in place, float32 or float16."""
        alpha = self.has_alpha and len(planes) > 3
        work = [np.ascontiguousarray(p, np.float32) for p in planes[: 4 if alpha else 3]]
        entered = [p.copy() for p in work] if alpha else []
        for step in self.steps:
            if isinstance(step, OcioCpu):
                step.apply_on_host(work, threads)
            elif alpha:  # without alpha these ops change nothing
                IN_NUMPY[type(step).__name__](work, entered)
        with np.errstate(over="ignore"):  # beyond half range becomes +-Inf, as the kernels store it
            for plane, values in zip(planes, work, strict=False):
                if plane is not values:
                    plane[...] = values


def _direction(OCIO: Any, inverse: bool) -> Any:  # noqa: N803
    return OCIO.TRANSFORM_DIR_INVERSE if inverse else OCIO.TRANSFORM_DIR_FORWARD


def _domain(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    """A LUT's input domain mapped onto OCIO's [0, 1] (nothing for the default domain)."""
    lo, hi = np.asarray(op.domain_min, np.float64), np.asarray(op.domain_max, np.float64)
    if np.all(lo == 0.0) and np.all(hi == 1.0):
        return []
    scale = 1.0 / (hi - lo)
    m = np.diag([*scale, 1.0]).ravel()
    return [OCIO.MatrixTransform(matrix=m.tolist(), offset=[*(-lo * scale).tolist(), 0.0])]


def _matrix(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    return [OCIO.MatrixTransform(matrix=[float(v) for v in op.m], offset=[float(v) for v in op.offset])]


def _cdl(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    t = OCIO.CDLTransform()
    t.setSlope(list(op.slope))
    t.setOffset(list(op.offset))
    t.setPower(list(op.power))
    t.setSat(float(op.sat))
    t.setStyle(OCIO.CDL_ASC if op.style == "asc" else OCIO.CDL_NO_CLAMP)
    return [t]


def _lut3d(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    t = OCIO.Lut3DTransform()
    t.setGridSize(op.table.shape[0])
    t.setData(np.ascontiguousarray(op.table, np.float32).ravel())  # [r, g, b]: blue fastest, as OCIO's
    t.setInterpolation(OCIO.INTERP_TETRAHEDRAL if op.interp == "tetrahedral" else OCIO.INTERP_LINEAR)
    return [*_domain(OCIO, op), t]


def _lut1d(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    t = OCIO.Lut1DTransform()
    t.setLength(op.table.shape[0])
    t.setData(np.ascontiguousarray(op.table, np.float32).ravel())
    t.setInputHalfDomain(bool(op.half_domain))
    t.setInterpolation(OCIO.INTERP_LINEAR)
    return [t] if op.half_domain else [*_domain(OCIO, op), t]


def _exponent(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    styles = {"clamp": OCIO.NEGATIVE_CLAMP, "mirror": OCIO.NEGATIVE_MIRROR, "pass": OCIO.NEGATIVE_PASS_THRU}
    t = OCIO.ExponentTransform()
    t.setValue([*op.gamma, 1.0])
    t.setNegativeStyle(styles[op.style])
    return [t]


def _exponent_linear(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    t = OCIO.ExponentWithLinearTransform()
    t.setGamma([*op.gamma, 1.0])
    t.setOffset([*op.offset, 0.0])
    t.setNegativeStyle(OCIO.NEGATIVE_MIRROR if op.mirror else OCIO.NEGATIVE_LINEAR)
    t.setDirection(_direction(OCIO, op.inverse))
    return [t]


def _log(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    if op.lin_break is not None:
        t = OCIO.LogCameraTransform(linSideBreak=list(op.lin_break))
        if op.linear_slope is not None:
            t.setLinearSlopeValue(list(op.linear_slope))
    else:
        t = OCIO.LogAffineTransform()
    t.setBase(float(op.base))
    t.setLogSideSlopeValue(list(op.log_slope))
    t.setLogSideOffsetValue(list(op.log_offset))
    t.setLinSideSlopeValue(list(op.lin_slope))
    t.setLinSideOffsetValue(list(op.lin_offset))
    t.setDirection(_direction(OCIO, op.inverse))
    return [t]


def _range(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    t = OCIO.RangeTransform()
    if op.min_in is not None:
        t.setMinInValue(float(op.min_in))
        t.setMinOutValue(float(op.min_out))
    if op.max_in is not None:
        t.setMaxInValue(float(op.max_in))
        t.setMaxOutValue(float(op.max_out))
    t.setStyle(OCIO.RANGE_CLAMP if op.clamp else OCIO.RANGE_NO_CLAMP)
    return [t]


def _exposure_contrast(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    styles = {"linear": OCIO.EXPOSURE_CONTRAST_LINEAR, "video": OCIO.EXPOSURE_CONTRAST_VIDEO,
              "log": OCIO.EXPOSURE_CONTRAST_LOGARITHMIC}
    t = OCIO.ExposureContrastTransform()
    t.setStyle(styles[op.style])
    t.setExposure(float(op.exposure))
    t.setContrast(float(op.contrast))
    t.setGamma(float(op.gamma))
    t.setPivot(float(op.pivot))
    t.setLogExposureStep(float(op.log_exposure_step))
    t.setLogMidGray(float(op.log_mid_gray))
    t.setDirection(_direction(OCIO, op.inverse))
    return [t]


def _aces2(OCIO: Any, op: Any) -> list[Any]:  # noqa: N803
    return [OCIO.FixedFunctionTransform(OCIO.FIXED_FUNCTION_ACES_OUTPUT_TRANSFORM_20,
                                        [float(op.peak_luminance), *(float(v) for v in op.limiting_primaries)])]


# Each oxi colour op with a kernel, by class name, as the OCIO transforms computing it (formats/ocio_ops.py
# turns OCIO's transforms into these ops; this is the way back).
TO_OCIO: dict[str, Callable[[Any, Any], list[Any]]] = {
    "Matrix": _matrix,
    "Cdl": _cdl,
    "Lut3d": _lut3d,
    "Lut1d": _lut1d,
    "Exponent": _exponent,
    "ExponentLinear": _exponent_linear,
    "Log": _log,
    "Range": _range,
    "ExposureContrast": _exposure_contrast,
    "Aces2Output": _aces2,
}


# Ops with a kernel that no OCIO transform computes, as NumPy on float32 R, G, B, A planes (and the planes as the
# chain began): a chain with them runs as HostSteps.
IN_NUMPY: dict[str, Callable[[list[np.ndarray], list[np.ndarray]], None]] = {
    "Unpremult": lambda planes, entered: unpremultiply(planes[:3], planes[3]),
    "Repremult": repremultiply,
}
