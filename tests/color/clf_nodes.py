"""CLF/CTF test files of every node kind and attribute combination, in the shapes OCIO's own tests use them
(OpenColorIO tests/data/files/clf/*.clf and *.ctf, tests/cpu/fileformats/FileFormatCTF_tests.cpp): file bit
depths from 8i to 32f, raw halfs, half domains, hue adjust, inverse LUTs, every Log, Exponent, Gamma, CDL, Range
and ExposureContrast style. Each case says whether oxi runs it natively or hands part of it to OCIO's CPU."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEPTH_MAX = {"8i": 255.0, "10i": 1023.0, "12i": 4095.0, "16i": 65535.0, "16f": 1.0, "32f": 1.0}
# (in, out) file bit depths each scaled node kind is written with, as OCIO's bit-depth tests mix them.
DEPTH_PAIRS = (("32f", "32f"), ("8i", "16i"), ("10i", "12i"), ("12i", "16f"), ("16i", "32f"), ("16f", "8i"),
               ("32f", "10i"))


@dataclass(frozen=True)
class Case:
    """`nodes`: the ProcessList's children; `ctf`: uses CTF-only elements (the file is .ctf); `native`: every
    op has an oxi kernel; `power_ec`: an exposure/contrast with a contrast other than 1 (OCIO renders it with
    its SSE power approximation, see test_exposure_contrast_matches_ocio.py); `aces2`: the ACES 2.0 output
    transform, checked to docs/GUIDE.md's bound for it."""

    nodes: str
    ctf: bool = False
    native: bool = True
    power_ec: bool = False
    aces2: bool = False


def document(name: str, case: Case) -> str:
    version = 'version="2.0"' if case.ctf else 'compCLFversion="3.0"'
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<ProcessList id="{name}" {version}>'
    return f"{head}\n{case.nodes}\n</ProcessList>\n"


def _rows(values: np.ndarray, fmt: str = "%.9g") -> str:
    values = np.asarray(values)
    if values.ndim == 1:
        values = values[:, None]
    return "\n".join(" ".join(fmt % v for v in row) for row in values.tolist())


def _array(values: np.ndarray, dim: str, fmt: str = "%.9g") -> str:
    return f'<Array dim="{dim}">\n{_rows(values, fmt)}\n</Array>'


def _depths(kind: str, depths: tuple[str, str], extra: str = "") -> str:
    return f'<{kind} inBitDepth="{depths[0]}" outBitDepth="{depths[1]}"{extra}>'


# --- 1D LUTs --------------------------------------------------------------------------------------------------

def _curve(n: int) -> np.ndarray:
    """An (n, 3) S-curve per channel, below 0 and above 1 at its ends, as real grading LUTs."""
    x = np.linspace(0.0, 1.0, n)[:, None]
    return np.concatenate([x**0.6 * 1.15 - 0.04, x**1.4 * 1.05 + 0.01, np.sin(x * 1.4) * 1.02 - 0.02], axis=1)


def _half_values() -> np.ndarray:
    """Every half float, in bit-pattern order (NaN patterns as NaN), as float64."""
    return np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)


def _half_curve() -> np.ndarray:
    """sign(x) * |x| ** 0.45 - 0.1 at every half value (as OCIO's lut1d_half_domain_raw_half_set.clf):
    Inf rows stay Inf and NaN rows NaN, as OCIO's own half-domain tables have them."""
    h = _half_values()
    with np.errstate(invalid="ignore"):
        return np.sign(h) * np.abs(h) ** 0.45 - 0.1


def _half_log() -> np.ndarray:
    """sign(x) * log2(1 + |x|) / 16 at every half value: monotonic, 0.99998 at 65504, so its inverse spans the
    whole half range."""
    h = _half_values()
    with np.errstate(invalid="ignore"):
        return np.sign(h) * np.log2(1.0 + np.abs(h)) / 16.0


def _half_bits(values: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(np.float16).view(np.uint16)


def lut1d_cases() -> dict[str, Case]:
    cases = {}
    for depths in DEPTH_PAIRS:
        table = _curve(33) * DEPTH_MAX[depths[1]]
        cases[f"lut1d_{depths[0]}_{depths[1]}"] = Case(f"{_depths('LUT1D', depths)}{_array(table, '33 3')}</LUT1D>")
    one = _curve(64)[:, 0]
    cases["lut1d_one_channel_linear"] = Case(
        f'<LUT1D inBitDepth="32f" outBitDepth="32f" interpolation="linear">{_array(one, "64 1")}</LUT1D>')
    cases["lut1d_nan_inf_entries"] = Case(
        f'<LUT1D inBitDepth="32f" outBitDepth="32f">{_array(np.array([[np.nan, -np.inf, 0.0], [0.2, 0.5, np.inf], [np.inf, 1.0, 1.0]]), "3 3")}</LUT1D>')  # noqa: E501
    raw = _half_bits(_curve(1024)[:, 1])
    cases["lut1d_raw_halfs"] = Case(
        f'<LUT1D inBitDepth="32f" outBitDepth="16f" rawHalfs="true">{_array(raw, "1024 1", "%d")}</LUT1D>')
    half = _half_curve()
    cases["lut1d_half_domain"] = Case(
        f'<LUT1D inBitDepth="16f" outBitDepth="32f" halfDomain="true">{_array(half, "65536 1")}</LUT1D>')
    cases["lut1d_half_domain_raw_halfs"] = Case(
        f'<LUT1D inBitDepth="16f" outBitDepth="16f" halfDomain="true" rawHalfs="true">'
        f'{_array(_half_bits(half), "65536 1", "%d")}</LUT1D>')
    cases["lut1d_half_domain_16i"] = Case(
        f'<LUT1D inBitDepth="16f" outBitDepth="16i" halfDomain="true">'
        f'{_array(np.clip(np.nan_to_num(half), 0.0, 1.0) * 65535.0, "65536 1")}</LUT1D>')
    cases["lut1d_hue_adjust"] = Case(
        f'<LUT1D inBitDepth="10i" outBitDepth="10i" hueAdjust="dw3">{_array(_curve(1024) * 1023.0, "1024 3")}'
        "</LUT1D>", ctf=True, native=False)
    cases["lut1d_half_domain_hue_adjust"] = Case(
        f'<LUT1D inBitDepth="16f" outBitDepth="16f" halfDomain="true" hueAdjust="dw3">{_array(half, "65536 1")}'
        "</LUT1D>", ctf=True, native=False)
    flat = _curve(17) * 4095.0
    flat[:3] = flat[3]  # a flat start and a flat top: the inverse picks an end of each flat run, as OCIO
    flat[-3:] = flat[-4]
    cases["inverse_lut1d_12i"] = Case(
        f'<InverseLUT1D inBitDepth="12i" outBitDepth="32f">{_array(flat, "17 3")}</InverseLUT1D>', ctf=True,
        native=False)
    log = _half_log()
    for depth in ("16f", "32f"):
        cases[f"inverse_lut1d_half_domain_{depth}_to_65504"] = Case(
            f'<InverseLUT1D inBitDepth="{depth}" outBitDepth="16f" halfDomain="true">{_array(log, "65536 1")}'
            "</InverseLUT1D>", ctf=True, native=False)
    cases["inverse_lut1d_half_domain_raw_halfs"] = Case(
        f'<InverseLUT1D inBitDepth="16f" outBitDepth="16f" halfDomain="true" rawHalfs="true">'
        f'{_array(_half_bits(log), "65536 1", "%d")}</InverseLUT1D>', ctf=True, native=False)
    cases["inverse_lut1d_half_domain_hue_adjust"] = Case(
        f'<InverseLUT1D inBitDepth="16f" outBitDepth="16f" halfDomain="true" hueAdjust="dw3">'
        f'{_array(log, "65536 1")}</InverseLUT1D>', ctf=True, native=False)
    return cases


# --- 3D LUTs --------------------------------------------------------------------------------------------------

def _cube(n: int) -> np.ndarray:
    """An (n^3, 3) table, blue fastest (CLF order): a saturation and contrast change, a little outside 0..1."""
    g = np.stack(np.meshgrid(*[np.linspace(0.0, 1.0, n)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    luma = g @ np.array([0.2126, 0.7152, 0.0722])
    return np.maximum(luma[:, None] + 1.25 * (g - luma[:, None]), 0.0) ** 1.1 * 1.05 - 0.02


def lut3d_cases() -> dict[str, Case]:
    cases = {}
    for depths in DEPTH_PAIRS:
        table = _cube(9) * DEPTH_MAX[depths[1]]
        cases[f"lut3d_{depths[0]}_{depths[1]}"] = Case(
            f"{_depths('LUT3D', depths)}{_array(table, '9 9 9 3')}</LUT3D>")
    for interp in ("tetrahedral", "trilinear"):
        cases[f"lut3d_{interp}"] = Case(
            f'<LUT3D inBitDepth="32f" outBitDepth="32f" interpolation="{interp}">'
            f'{_array(_cube(17), "17 17 17 3")}</LUT3D>')
    cases["inverse_lut3d"] = Case(
        f'<InverseLUT3D inBitDepth="12i" outBitDepth="32f">{_array(_cube(9) * 4095.0, "9 9 9 3")}'
        "</InverseLUT3D>", ctf=True, native=False)
    return cases


# --- Matrix and Range -----------------------------------------------------------------------------------------

MATRIX = np.array([[1.1, 0.05, -0.02, 0.01], [0.03, 0.95, 0.02, -0.02], [-0.01, 0.04, 1.05, 0.005]])


def matrix_cases() -> dict[str, Case]:
    cases = {}
    for depths in DEPTH_PAIRS:
        scaled = MATRIX * DEPTH_MAX[depths[1]] / DEPTH_MAX[depths[0]]
        scaled[:, 3] = MATRIX[:, 3] * DEPTH_MAX[depths[1]]
        cases[f"matrix_{depths[0]}_{depths[1]}"] = Case(f"{_depths('Matrix', depths)}{_array(scaled, '3 4')}</Matrix>")
    cases["matrix_3x3"] = Case(f'<Matrix inBitDepth="32f" outBitDepth="32f">{_array(MATRIX[:, :3], "3 3")}</Matrix>')
    cases["matrix_diagonal"] = Case(
        f'<Matrix inBitDepth="32f" outBitDepth="32f">{_array(np.diag([20.0, 0.5, 1.5]), "3 3")}</Matrix>')
    cases["matrix_diagonal_offset_8i_16i"] = Case(
        f'<Matrix inBitDepth="8i" outBitDepth="16i">'
        f'{_array(np.array([[257.0 * 1.2, 0, 0, 655.35], [0, 257.0, 0, 0], [0, 0, 257.0 * 0.8, -655.35]]), "3 4")}'
        "</Matrix>")
    alpha = np.array([[1.1, 0.05, -0.02, 0.0, 0.01], [0.03, 0.95, 0.02, 0.0, -0.02], [-0.01, 0.04, 1.05, 0.0, 0.005],
                      [0.0, 0.0, 0.0, 1.0, 0.0]])
    cases["matrix_4x5_ctf"] = Case(f'<Matrix inBitDepth="32f" outBitDepth="32f">{_array(alpha, "4 5 4")}</Matrix>',
                                   ctf=True)
    return cases


def _range(depths: tuple[str, str], lo: tuple[float, float] | None, hi: tuple[float, float] | None,
           style: str = "Clamp") -> str:
    inn, out = DEPTH_MAX[depths[0]], DEPTH_MAX[depths[1]]
    parts = []
    if lo is not None:
        parts.append(f"<minInValue>{lo[0] * inn!r}</minInValue><minOutValue>{lo[1] * out!r}</minOutValue>")
    if hi is not None:
        parts.append(f"<maxInValue>{hi[0] * inn!r}</maxInValue><maxOutValue>{hi[1] * out!r}</maxOutValue>")
    return f"{_depths('Range', depths, f' style={chr(34)}{style}{chr(34)}')}{''.join(parts)}</Range>"


def range_cases() -> dict[str, Case]:
    cases = {}
    for depths in DEPTH_PAIRS:
        cases[f"range_{depths[0]}_{depths[1]}"] = Case(_range(depths, (0.0625, 0.0), (0.92, 1.0)))
    # One bound only: OCIO (and CLF) want equal in and out values there, a clamp.
    cases["range_min_only"] = Case(_range(("32f", "32f"), (0.1, 0.1), None))
    cases["range_max_only"] = Case(_range(("32f", "32f"), None, (1.2, 1.2)))
    cases["range_min_only_8i_32f"] = Case(_range(("8i", "32f"), (16 / 255, 16 / 255), None))
    cases["range_max_only_16f_12i"] = Case(_range(("16f", "12i"), None, (0.9, 0.9)))
    cases["range_no_clamp"] = Case(_range(("8i", "32f"), (16 / 255, -0.05), (272 / 255, 1.05), "noClamp"))
    cases["range_no_clamp_16f_10i"] = Case(_range(("16f", "10i"), (-0.1, 0.0), (1.5, 1.0), "noClamp"))
    return cases


# --- Log, Exponent, Gamma ------------------------------------------------------------------------------------

CINEON = 'logSideSlope="0.29325513196" logSideOffset="0.66959921799" linSideSlope="0.98920224838" ' \
         'linSideOffset="0.01079775162" base="10"'
ACESCCT = 'logSideSlope="0.05707762557" logSideOffset="0.5547945205" linSideBreak="0.0078125"'
SLOG3 = 'logSideSlope="0.25562072336" logSideOffset="0.41055718475" linSideBreak="0.01125" ' \
        'linSideSlope="5.26315789474" linSideOffset="0.05263157895" linearSlope="6.62194371178" base="10"'
PER_CHANNEL = ("<LogParams channel=\"R\" logSideSlope='0.3' logSideOffset='0.6' linSideSlope='0.9' "
               "linSideOffset='0.05' base='8' {brk}/><LogParams channel=\"G\" linSideSlope='5' linSideOffset='0.05' "
               "logSideSlope='0.25' logSideOffset='0.4' base='8' {brk}/><LogParams channel=\"B\" linSideSlope='2' "
               "linSideOffset='0.1' logSideSlope='0.28' logSideOffset='0.5' base='8' {brk}/>")


def log_cases() -> dict[str, Case]:
    cases = {}
    for style in ("log10", "log2", "antiLog10", "antiLog2"):
        cases[f"log_{style}"] = Case(f'<Log inBitDepth="32f" outBitDepth="32f" style="{style}"/>')
    params = {"cineon": CINEON, "acescct": ACESCCT, "slog3": SLOG3}
    for name, p in params.items():
        camera = "camera" if "linSideBreak" in p else ""
        for way in ("LinToLog", "LogToLin"):
            style = f"camera{way}" if camera else way[0].lower() + way[1:]
            cases[f"log_{name}_{style}"] = Case(
                f'<Log inBitDepth="16f" outBitDepth="12i" style="{style}"><LogParams {p}/></Log>')
    for style, brk in (("linToLog", ""), ("logToLin", ""), ("cameraLinToLog", "linSideBreak='0.02'"),
                       ("cameraLogToLin", "linSideBreak='0.02'")):
        cases[f"log_per_channel_{style}"] = Case(
            f'<Log inBitDepth="10i" outBitDepth="32f" style="{style}">{PER_CHANNEL.format(brk=brk)}</Log>')
    return cases


EXPONENT_STYLES = ("basicFwd", "basicRev", "basicMirrorFwd", "basicMirrorRev", "basicPassThruFwd",
                   "basicPassThruRev", "monCurveFwd", "monCurveRev", "monCurveMirrorFwd", "monCurveMirrorRev")


def exponent_cases() -> dict[str, Case]:
    cases = {}
    for style in EXPONENT_STYLES:
        offset = ' offset="{o}"' if style.startswith("monCurve") else ""
        one = f'<ExponentParams exponent="2.4"{offset.format(o=0.055)}/>'
        per = "".join(f'<ExponentParams channel="{c}" exponent="{e}"{offset.format(o=o)}/>'
                      for c, e, o in (("R", 2.2, 0.099), ("G", 2.4, 0.055), ("B", 2.6, 0.16)))
        cases[f"exponent_{style}"] = Case(
            f'<Exponent inBitDepth="8i" outBitDepth="16f" style="{style}">{one}</Exponent>')
        cases[f"exponent_{style}_per_channel"] = Case(
            f'<Exponent inBitDepth="32f" outBitDepth="10i" style="{style}">{per}</Exponent>')
    for style in ("basicFwd", "basicRev", "moncurveFwd", "moncurveRev", "basicMirrorFwd", "moncurveMirrorRev"):
        offset = ' offset="0.055"' if "oncurve" in style else ""
        cases[f"gamma_{style}"] = Case(
            f'<Gamma inBitDepth="16f" outBitDepth="8i" style="{style}"><GammaParams gamma="2.4"{offset}/>'
            f'<GammaParams channel="A" gamma="1.8"{offset}/></Gamma>', ctf=True)
    return cases


# --- CDL and ExposureContrast ---------------------------------------------------------------------------------

SOP = ("<SOPNode><Slope>1.0 1.0 0.8</Slope><Offset>-0.02 0.0 0.15</Offset><Power>1.05 1.15 1.4</Power></SOPNode>")


def cdl_cases() -> dict[str, Case]:
    cases = {}
    for style, native in (("Fwd", True), ("Rev", False), ("FwdNoClamp", True), ("RevNoClamp", False)):
        cases[f"cdl_{style}"] = Case(
            f'<ASC_CDL inBitDepth="16f" outBitDepth="10i" style="{style}">{SOP}<SatNode><Saturation>0.75</Saturation>'
            "</SatNode></ASC_CDL>", native=native)
    cases["cdl_no_sat"] = Case(f'<ASC_CDL inBitDepth="32f" outBitDepth="32f" style="FwdNoClamp">{SOP}</ASC_CDL>')
    return cases


def exposure_contrast_cases() -> dict[str, Case]:
    cases = {}
    for style in ("linear", "video", "log"):
        for way in ("", "Rev"):
            for contrast, gamma in ((1.0, 1.0), (1.2, 0.9)):
                power = style != "log" and contrast * gamma != 1.0
                log = ' logExposureStep="0.1" logMidGray="0.4"' if style == "log" else ""
                cases[f"exposure_contrast_{style}{way}_{contrast * gamma:g}"] = Case(
                    f'<ExposureContrast inBitDepth="32f" outBitDepth="32f" style="{style}{way}">'
                    f'<ECParams exposure="0.65" contrast="{contrast}" gamma="{gamma}" pivot="0.18"{log}/>'
                    "</ExposureContrast>", ctf=True, power_ec=power)
    cases["exposure_contrast_dynamic"] = Case(
        '<ExposureContrast inBitDepth="32f" outBitDepth="32f" style="linear"><ECParams exposure="0.65" contrast="1.2"'
        ' gamma="0.5" pivot="1"/><DynamicParameter param="EXPOSURE"/></ExposureContrast>', ctf=True, native=False)
    return cases


def fixed_function_cases() -> dict[str, Case]:
    return {
        "fixed_function_rgb_to_hsv": Case('<FixedFunction inBitDepth="32f" outBitDepth="32f" style="RGB_TO_HSV"/>',
                                          ctf=True, native=False),
        "fixed_function_red_mod_03": Case(
            '<FixedFunction inBitDepth="32f" outBitDepth="32f" style="RedMod03Fwd"/>', ctf=True, native=False),
        "fixed_function_aces2_output": Case(
            '<FixedFunction inBitDepth="32f" outBitDepth="32f" style="ACESOutputTransform20Fwd" '
            'params="100 0.64 0.33 0.3 0.6 0.15 0.06 0.3127 0.329"/>', ctf=True, aces2=True),
        "fixed_function_aces2_output_inverse": Case(
            '<FixedFunction inBitDepth="32f" outBitDepth="32f" style="ACESOutputTransform20Inv" '
            'params="100 0.64 0.33 0.3 0.6 0.15 0.06 0.3127 0.329"/>', ctf=True, native=False),
        "fixed_function_surround": Case(
            '<FixedFunction inBitDepth="32f" outBitDepth="32f" style="Rec2100SurroundFwd" params="0.8"/>', ctf=True,
            native=False),
    }


def all_cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for group in (lut1d_cases, lut3d_cases, matrix_cases, range_cases, log_cases, exponent_cases, cdl_cases,
                  exposure_contrast_cases, fixed_function_cases):
        cases.update(group())
    # Several kinds in one file (each node's input depth the last one's output), native runs fused around
    # OCIO's pieces.
    log = f'<Log inBitDepth="32f" outBitDepth="12i" style="cameraLinToLog"><LogParams {ACESCCT}/></Log>'
    chain = (cases["matrix_32f_32f"].nodes, log, cases["inverse_lut1d_12i"].nodes, cases["lut3d_tetrahedral"].nodes,
        cases["exponent_monCurveRev"].nodes.replace('inBitDepth="8i"', 'inBitDepth="32f"'))
    cases["chain_native_and_fallback"] = Case("\n".join(chain), ctf=True, native=False)
    return cases


def kind(name: str) -> str:
    """The node kind a case belongs to, for the error figures."""
    for prefix in ("inverse_lut1d", "inverse_lut3d", "lut1d", "lut3d", "matrix", "range", "log", "exponent",
                   "gamma", "cdl", "exposure_contrast", "fixed_function", "chain"):
        if name.startswith(prefix):
            return prefix
    raise KeyError(name)
