"""OCIO processors as oxi ops: each optimised OCIO op becomes the oxi op that computes it; runs of ops
with no oxi kernel go to OpenColorIO's CPU processor (ops/ocio_cpu.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from oxi_cli.errors import FormatError, ProcessingError
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
    luts = []
    for t in transforms:
        if type(t).__name__ in _LUT_TAGS.values():
            # The entries go out as decimal float32 values (below): no rescaling to an integer depth, no half bits.
            t.setFileOutputBitDepth(OCIO.BIT_DEPTH_F32)
            if hasattr(t, "setOutputRawHalfs"):
                t.setOutputRawHalfs(False)
            luts.append(t)
        group.appendTransform(t)
    ctf = group.write("Color Transform Format", OCIO.Config.CreateRaw())
    return OcioCpu(_exact_tables(ctf, luts), tuple(_label(t) for t in transforms))


# The CTF elements of LUT transforms, by tag.
_LUT_TAGS = {"LUT1D": "Lut1DTransform", "InverseLUT1D": "Lut1DTransform", "LUT3D": "Lut3DTransform",
             "InverseLUT3D": "Lut3DTransform"}


def _exact_tables(ctf: str, luts: list[Any]) -> str:
    """The CTF document with each LUT's entries written so they read back as the same float32 values. OCIO's
    writer prints 8 significant digits at 32f (5 at 16f, 6 at integer depths): a half-domain inverse LUT read
    back from its own text was 1.4e-2 off OCIO at 6e4, where the inverse magnifies the entries' rounding."""
    import xml.etree.ElementTree as ET

    def local(tag: str) -> str:
        return tag.rsplit("}", 1)[-1]

    root = ET.fromstring(ctf)
    arrays = [a for e in root if local(e.tag) in _LUT_TAGS for a in e if local(a.tag) == "Array"]
    if len(arrays) != len(luts):
        raise ProcessingError(f"OCIO's CTF writer gave {len(arrays)} LUT arrays for {len(luts)} LUTs")
    for array, lut in zip(arrays, luts, strict=True):
        columns = int(array.get("dim", "0").split()[-1])
        values = np.asarray(lut.getData(), np.float32).reshape(-1, 3)[:, :columns]
        # 9 significant digits give back every float32; one % over all of them (a 65^3 table: 0.5 s).
        array.text = "\n" + (" ".join(["%.9g"] * columns) + "\n") * len(values) % tuple(values.ravel().tolist())
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def _label(transform: Any) -> str:
    """What the warning line calls a transform OCIO's CPU runs: the kind, its style or hue adjust, its direction."""
    name = type(transform).__name__.removesuffix("Transform")
    style = getattr(transform, "getStyle", None)
    if name == "FixedFunction" and style is not None:
        name = f"FixedFunction {str(style()).rsplit('.', 1)[-1].removeprefix('FIXED_FUNCTION_')}"
    if name == "Lut1D" and transform.getHueAdjust() != ocio().HUE_NONE:
        name = "Lut1D with hue adjust"
    if name == "ExposureContrast" and _dynamic(transform):
        name = "dynamic ExposureContrast"
    getter = getattr(transform, "getDirection", None)
    return f"inverse {name}" if getter is not None and _inverse(transform) else name


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
    # getData() gives the values, whatever the file stored: raw half bits (rawHalfs="true") come back decoded.
    table = np.asarray(t.getData(), np.float32).reshape(-1, 3)
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
    if _dynamic(t):
        return None  # dynamic properties change after the processor is built: OCIO keeps them
    return [ExposureContrast(t.getExposure(), t.getContrast(), t.getGamma(), t.getPivot(), styles[t.getStyle()],
                             t.getLogExposureStep(), t.getLogMidGray(), _inverse(t))]


def _dynamic(t: Any) -> bool:
    return bool(t.isExposureDynamic() or t.isContrastDynamic() or t.isGammaDynamic())


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
