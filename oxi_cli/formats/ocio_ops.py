"""OCIO processors as oxi ops: each optimised OCIO op becomes the oxi op that computes it; runs of ops
with no oxi kernel go to OpenColorIO's CPU processor (ops/ocio_cpu.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from oxi_cli.errors import FormatError
from oxi_cli.formats.ocio_config import ocio
from oxi_cli.ops import (
    Aces2Output,
    Cdl,
    ColorOp,
    Exponent,
    ExponentLinear,
    ExposureContrast,
    Log,
    Lut1d,
    Lut3d,
    Matrix,
    Range,
)
from oxi_cli.ops.ocio_cpu import OcioCpu

# A translator returns the oxi ops computing one OCIO transform, or None when oxi has no kernel for it
# (that transform then runs in OCIO's CPU processor).
Translator = Callable[[Any], "list[ColorOp] | None"]


def optimised_group(processor: Any) -> Any:
    """The processor's ops after OCIO's lossless optimisation (the default one uses a fast pow with
    ~2.5e-5 relative error; LOSSLESS keeps every op exact)."""
    OCIO = ocio()
    return processor.getOptimizedProcessor(OCIO.OPTIMIZATION_LOSSLESS).createGroupTransform()


def ops_from_processor(processor: Any) -> list[ColorOp]:
    """oxi ops computing what `processor` computes, in order; consecutive untranslatable transforms are
    grouped into one OCIO CPU step."""
    ops: list[ColorOp] = []
    pending: list[Any] = []
    for transform in optimised_group(processor):
        native = _translate(transform)
        if native is None:
            pending.append(transform)
            continue
        if pending:
            ops.append(_fallback(pending))
            pending = []
        ops.extend(native)
    if pending:
        ops.append(_fallback(pending))
    return ops


def fallback_note(ops: list[ColorOp], what: str) -> str | None:
    """The one warning line for ops OCIO's CPU runs, or None when every op is native."""
    covered = [name for op in ops if isinstance(op, OcioCpu) for name in op.covers]
    if not covered:
        return None
    names = ", ".join(dict.fromkeys(covered))
    return f"{what}: no oxi kernel yet for {names}; running it with OpenColorIO's CPU processor"


def _fallback(transforms: list[Any]) -> OcioCpu:
    OCIO = ocio()
    group = OCIO.GroupTransform()
    for t in transforms:
        group.appendTransform(t)
    ctf = group.write("Color Transform Format", OCIO.Config.CreateRaw())
    return OcioCpu(ctf, tuple(_label(t) for t in transforms))


def _label(transform: Any) -> str:
    name = type(transform).__name__.removesuffix("Transform")
    style = getattr(transform, "getStyle", None)
    if name == "FixedFunction" and style is not None:
        return f"FixedFunction {str(style()).rsplit('.', 1)[-1].removeprefix('FIXED_FUNCTION_')}"
    if name == "Lut1D" and _inverse(transform):
        return "inverse Lut1D"
    return name


def _translate(transform: Any) -> list[ColorOp] | None:
    translator = TRANSLATORS.get(type(transform).__name__)
    return None if translator is None else translator(transform)


def _inverse(transform: Any) -> bool:
    return transform.getDirection() == ocio().TRANSFORM_DIR_INVERSE


def _matrix(t: Any) -> list[ColorOp]:
    m = np.asarray(t.getMatrix(), np.float64).reshape(4, 4)
    off = np.asarray(t.getOffset(), np.float64)
    if _inverse(t):
        m = np.linalg.inv(m)
        off = -m @ off
    return [Matrix(tuple(m.ravel().tolist()), tuple(off.tolist()))]  # type: ignore[arg-type]


def _lut1d(t: Any) -> list[ColorOp] | None:
    OCIO = ocio()
    if _inverse(t) or t.getHueAdjust() != OCIO.HUE_NONE:
        return None
    table = np.asarray(t.getData(), np.float32).reshape(-1, 3)
    if t.getOutputRawHalfs():
        table = table.astype(np.uint16).view(np.float16).astype(np.float32)
    # As OCIO's renderer loads a table (SanitizeFloat): +-Inf entries become +-FLT_MAX, NaN 0.
    top = float(np.finfo(np.float32).max)
    table = np.nan_to_num(table, nan=0.0, posinf=top, neginf=-top)
    return [Lut1d(table, half_domain=bool(t.getInputHalfDomain()))]


def _lut3d(t: Any) -> list[ColorOp] | None:
    OCIO = ocio()
    if _inverse(t):
        return None
    n = t.getGridSize()
    table = np.asarray(t.getData(), np.float32).reshape(n, n, n, 3)  # blue fastest: [r, g, b] as oxi's
    interp = t.getInterpolation()
    # OCIO's CPU: BEST and TETRAHEDRAL are tetrahedral, everything else trilinear.
    tetra = interp in (OCIO.INTERP_BEST, OCIO.INTERP_TETRAHEDRAL)
    return [Lut3d(table, interp="tetrahedral" if tetra else "trilinear")]


def _cdl(t: Any) -> list[ColorOp] | None:
    OCIO = ocio()
    if _inverse(t):
        return None
    style = "asc" if t.getStyle() == OCIO.CDL_ASC else "noclamp"
    return [Cdl(tuple(t.getSlope()), tuple(t.getOffset()), tuple(t.getPower()), t.getSat(), style)]


def _exponent(t: Any) -> list[ColorOp] | None:
    OCIO = ocio()
    styles = {OCIO.NEGATIVE_CLAMP: "clamp", OCIO.NEGATIVE_MIRROR: "mirror", OCIO.NEGATIVE_PASS_THRU: "pass"}
    style = styles.get(t.getNegativeStyle())
    if style is None:
        return None
    gamma = [float(g) for g in t.getValue()[:3]]
    if _inverse(t):
        gamma = [1.0 / g for g in gamma]  # OCIO's reverse renderer: float(1. / gamma)
    return [Exponent(tuple(gamma), style)]  # type: ignore[arg-type]


def _exponent_linear(t: Any) -> list[ColorOp] | None:
    OCIO = ocio()
    if t.getNegativeStyle() not in (OCIO.NEGATIVE_LINEAR, OCIO.NEGATIVE_MIRROR):
        return None
    mirror = t.getNegativeStyle() == OCIO.NEGATIVE_MIRROR
    return [ExponentLinear(tuple(t.getGamma()[:3]), tuple(t.getOffset()[:3]), mirror, _inverse(t))]


def _log(t: Any) -> list[ColorOp]:
    return [Log(base=t.getBase(), inverse=_inverse(t))]


def _log_affine(t: Any) -> list[ColorOp]:
    return [Log(**_log_sides(t), inverse=_inverse(t))]


def _log_camera(t: Any) -> list[ColorOp]:
    slope = tuple(t.getLinearSlopeValue()) if t.isLinearSlopeValueSet() else None
    return [Log(**_log_sides(t), lin_break=tuple(t.getLinSideBreakValue()), linear_slope=slope, inverse=_inverse(t))]


def _log_sides(t: Any) -> dict[str, Any]:
    return {
        "base": t.getBase(),
        "log_slope": tuple(t.getLogSideSlopeValue()),
        "log_offset": tuple(t.getLogSideOffsetValue()),
        "lin_slope": tuple(t.getLinSideSlopeValue()),
        "lin_offset": tuple(t.getLinSideOffsetValue()),
    }


def _range(t: Any) -> list[ColorOp]:
    OCIO = ocio()
    lo = (t.getMinInValue(), t.getMinOutValue()) if t.hasMinInValue() else (None, None)
    hi = (t.getMaxInValue(), t.getMaxOutValue()) if t.hasMaxInValue() else (None, None)
    if _inverse(t):  # the inverse maps the output bounds back onto the input ones
        lo, hi = lo[::-1], hi[::-1]
    return [Range(lo[0], hi[0], lo[1], hi[1], clamp=t.getStyle() == OCIO.RANGE_CLAMP)]


def _exposure_contrast(t: Any) -> list[ColorOp] | None:
    OCIO = ocio()
    styles = {OCIO.EXPOSURE_CONTRAST_LINEAR: "linear", OCIO.EXPOSURE_CONTRAST_VIDEO: "video",
              OCIO.EXPOSURE_CONTRAST_LOGARITHMIC: "log"}
    if t.isExposureDynamic() or t.isContrastDynamic() or t.isGammaDynamic():
        return None  # dynamic properties change after the processor is built: OCIO keeps them
    return [ExposureContrast(t.getExposure(), t.getContrast(), t.getGamma(), t.getPivot(), styles[t.getStyle()],
                             t.getLogExposureStep(), t.getLogMidGray(), _inverse(t))]


def _fixed_function(t: Any) -> list[ColorOp] | None:
    OCIO = ocio()
    if t.getStyle() != OCIO.FIXED_FUNCTION_ACES_OUTPUT_TRANSFORM_20 or _inverse(t):
        return None
    peak, *limiting = (float(v) for v in t.getParams())
    return [Aces2Output(peak, tuple(limiting))]  # type: ignore[arg-type]


TRANSLATORS: dict[str, Translator] = {
    "MatrixTransform": _matrix,
    "Lut1DTransform": _lut1d,
    "Lut3DTransform": _lut3d,
    "CDLTransform": _cdl,
    "ExponentTransform": _exponent,
    "ExponentWithLinearTransform": _exponent_linear,
    "LogTransform": _log,
    "LogAffineTransform": _log_affine,
    "LogCameraTransform": _log_camera,
    "RangeTransform": _range,
    "ExposureContrastTransform": _exposure_contrast,
    "FixedFunctionTransform": _fixed_function,
}


def parse_transform_file(data: bytes, path: Path, interp: str) -> list[ColorOp]:
    """A .clf / .ctf file read by OCIO (as a FileTransform) and translated like any processor. `interp`
    applies to 3D LUTs the file leaves at their default interpolation; `data` is unused: OCIO reads the
    file itself."""
    OCIO = ocio()
    transform = OCIO.FileTransform(src=str(path))
    transform.setInterpolation(OCIO.INTERP_TETRAHEDRAL if interp == "tetrahedral" else OCIO.INTERP_LINEAR)
    try:
        processor = OCIO.Config.CreateRaw().getProcessor(transform)
    except Exception as e:
        raise FormatError(path, None, " ".join(str(e).split())) from None
    return ops_from_processor(processor)
