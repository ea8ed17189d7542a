"""Generate oxi's bundled examples (an HDR EXR plate, a 33³ .cube look, ASC CDL .cc and .ccc) with no download."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import OpenEXR

HERE = Path(__file__).resolve().parent
PLATE_NAME, LOOK_NAME, GRADE_NAME, SHOTS_NAME = "plate.exr", "look.cube", "grade.cc", "shots.ccc"
LUMA_709 = np.array([0.2126, 0.7152, 0.0722])
# ACES AP1 primaries and the ACES white point (SMPTE ST 2065-1), as x, y pairs: red, green, blue, white.
ACESCG_CHROMATICITIES = (0.713, 0.293, 0.165, 0.830, 0.128, 0.044, 0.32168, 0.33767)

# Classic ColorChecker patches as 8-bit sRGB (widely published values); linearised when drawn.
CHECKER_SRGB8 = [
    (115, 82, 68), (194, 150, 130), (98, 122, 157), (87, 108, 67), (133, 128, 177), (103, 189, 170),
    (214, 126, 44), (80, 91, 166), (193, 90, 99), (94, 60, 108), (157, 188, 64), (224, 163, 46),
    (56, 61, 150), (70, 148, 73), (175, 54, 60), (231, 199, 31), (187, 86, 149), (8, 133, 161),
    (243, 243, 242), (200, 200, 200), (160, 160, 160), (122, 122, 121), (85, 85, 85), (52, 52, 52),
]


@dataclass(frozen=True)
class CdlValues:
    """One ASC CDL correction: slope, offset, power per channel and a saturation."""

    id: str
    slope: tuple[float, float, float]
    offset: tuple[float, float, float]
    power: tuple[float, float, float]
    sat: float
    description: str = ""


# A gentle warm grade: warmer highlights, slightly lifted red blacks, a touch less saturation.
GRADE = CdlValues(
    id="warm_grade",
    slope=(1.06, 1.0, 0.93),
    offset=(0.004, 0.0, -0.003),
    power=(0.96, 1.0, 1.04),
    sat=0.92,
    description="oxi example: warm highlights, slightly lifted red blacks, 8% less saturation",
)
# A collection with a correction per shot, as a grading session exports it (`--cdl shots.ccc --id sh010`).
SHOTS = [
    CdlValues(id="sh010", slope=(1.1, 1.0, 0.9), offset=(0.01, 0.0, -0.01), power=(1.0, 1.0, 1.0), sat=0.95,
              description="oxi example: sh010, warmer"),
    CdlValues(id="sh020", slope=(0.95, 1.0, 1.08), offset=(0.0, 0.0, 0.005), power=(1.05, 1.0, 0.98), sat=1.05,
              description="oxi example: sh020, cooler"),
]


def _srgb_to_linear(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _rgb(r: float, g: float, b: float) -> np.ndarray:
    # float32 throughout keeps a 4K plate's temporaries small and quick.
    return np.array([r, g, b], dtype=np.float32)


def _smoothstep(edge0: float, edge1: float, x: np.ndarray) -> np.ndarray:
    t = np.clip((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def render_plate(width: int, height: int, grain: float = 0.0, seed: int = 7) -> dict[str, np.ndarray]:
    """Scene-linear RGBA plus a `diffuse` AOV: sky gradient, sun (~25), lit sphere, ground, a chart.

    Values run from slightly negative (an out-of-gamut patch, shadow grain) to well above 1 (sun, sky).
    `grain` is the standard deviation of sensor-like noise relative to signal (plus a small floor), so
    large plates compress with ZIP about as real ones do. Returns float32 planes keyed by channel name.
    """
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    u = (x + 0.5) / width
    v = (y + 0.5) / height  # 0 at the top
    aspect = width / height
    px = 1.0 / height  # one pixel in v units, for antialiased edges

    horizon = 0.62
    sky_t = np.clip(v / horizon, 0.0, 1.0)[..., None]
    sky_top, sky_horizon = _rgb(0.06, 0.14, 0.42), _rgb(1.6, 1.15, 0.75)
    sky = sky_top + (sky_horizon - sky_top) * sky_t**1.8

    sun_u, sun_v = 0.78, 0.30
    d_sun = np.hypot((u - sun_u) * aspect, v - sun_v)
    sun_disc = 1.0 - _smoothstep(0.035 - px, 0.035 + px, d_sun)
    glow = np.exp(-((d_sun / 0.12) ** 2))
    sky = sky + glow[..., None] * _rgb(3.0, 2.2, 1.2) + sun_disc[..., None] * _rgb(25.0, 21.0, 15.0)

    # Ground: a darker plane below the horizon with a gentle falloff towards the camera.
    ground_cov = _smoothstep(horizon - px, horizon + px, v)[..., None]
    ground = _rgb(0.11, 0.09, 0.06) * (0.6 + 1.4 * (v - horizon).clip(0.0, None))[..., None]
    beauty = sky * (1.0 - ground_cov) + ground * ground_cov
    diffuse = ground * ground_cov

    # A Lambert-lit red sphere, lit from the sun's side, with a hot specular highlight.
    cx, cy, r = 0.30, 0.58, 0.22
    dx, dy = (u - cx) * aspect / r, (v - cy) / r
    rr = dx * dx + dy * dy
    sphere_cov = (1.0 - _smoothstep(1.0 - 2 * px / r, 1.0, np.sqrt(rr)))[..., None]
    nz = np.sqrt(np.clip(1.0 - rr, 0.0, 1.0))
    light = _rgb(0.62, -0.45, 0.64) / np.linalg.norm([0.62, -0.45, 0.64])
    lambert = np.clip(dx * light[0] + dy * light[1] + nz * light[2], 0.0, None)[..., None]
    albedo = _rgb(0.75, 0.12, 0.08)
    sphere_diffuse = albedo * (lambert * _rgb(1.25, 1.1, 0.9) + _rgb(0.05, 0.07, 0.12))
    half_vec = light + _rgb(0.0, 0.0, 1.0)
    half_vec /= np.linalg.norm(half_vec)
    spec = np.clip(dx * half_vec[0] + dy * half_vec[1] + nz * half_vec[2], 0.0, None) ** 80 * 4.0
    sphere = sphere_diffuse + spec[..., None]
    beauty = beauty * (1.0 - sphere_cov) + sphere * sphere_cov
    diffuse = diffuse * (1.0 - sphere_cov) + sphere_diffuse * sphere_cov

    # Colour chart (4 rows x 6) plus one out-of-gamut cyan patch with a negative red. Patch edges are
    # separable, so each patch blends only inside its own bounding box.
    patches = [_srgb_to_linear(np.array(c) / 255.0) for c in CHECKER_SRGB8]
    cols, rows = 6, 4
    chart_u0, chart_v0, cell = 0.60, 0.68, 0.065
    u1, v1 = u[0], v[:, 0]
    for i, colour in enumerate([*patches, np.array([-0.04, 0.32, 0.46])]):
        row, col = divmod(i, cols) if i < cols * rows else (rows, 0)
        u0 = chart_u0 + col * cell * 1.12 / aspect
        v0 = chart_v0 + row * cell * 1.12
        u_end, v_end = u0 + cell / aspect, v0 + cell
        in_u = _smoothstep(u0 - px, u0 + px, u1) * (1 - _smoothstep(u_end - px, u_end + px, u1))
        in_v = _smoothstep(v0 - px, v0 + px, v1) * (1 - _smoothstep(v_end - px, v_end + px, v1))
        cs, rs = np.flatnonzero(in_u), np.flatnonzero(in_v)
        if cs.size == 0 or rs.size == 0:
            continue
        box = np.s_[rs[0] : rs[-1] + 1, cs[0] : cs[-1] + 1]
        cov = np.outer(in_v[rs[0] : rs[-1] + 1], in_u[cs[0] : cs[-1] + 1])[..., None]
        lit = (colour * 0.9).astype(np.float32)
        beauty[box] = beauty[box] * (1.0 - cov) + lit * cov
        diffuse[box] = diffuse[box] * (1.0 - cov) + lit * cov

    if grain > 0.0:
        rng = np.random.default_rng(seed)
        noise = rng.standard_normal(beauty.shape, dtype=np.float32)
        beauty = beauty + noise * (grain * np.sqrt(np.abs(beauty) * 0.5 + 0.002))

    # Alpha: opaque, except a soft semi-transparent smoke card in the upper left.
    card = np.exp(-(((u - 0.16) * aspect / 0.25) ** 2 + ((v - 0.18) / 0.12) ** 2))
    alpha = 1.0 - 0.55 * card

    planes = {name: beauty[..., i] for i, name in enumerate("RGB")}
    planes["A"] = alpha
    planes.update({f"diffuse.{name}": diffuse[..., i] for i, name in enumerate("RGB")})
    return {name: p.astype(np.float32) for name, p in planes.items()}


def write_exr(path: Path, planes: dict[str, np.ndarray], extra_header: dict | None = None) -> None:
    """Write the planes as a half-float, ZIP-compressed scanline EXR declaring ACEScg (AP1 primaries, ACES white)."""
    header = {
        "compression": OpenEXR.ZIP_COMPRESSION,
        "type": OpenEXR.scanlineimage,
        # ACEScg, the space every example converts from (`--from ACEScg`): a plate declaring another space makes
        # oxi warn that --from contradicts the file.
        "chromaticities": ACESCG_CHROMATICITIES,
    }
    header.update(extra_header or {})
    channels = {name: p.astype(np.float16) for name, p in planes.items()}
    with OpenEXR.File(header, channels) as f:
        f.write(str(path))


def aces_filmic(x: np.ndarray) -> np.ndarray:
    """Narkowicz's fit of the ACES RRT+ODT tone curve: toe, straight middle, soft shoulder."""
    return x * (2.51 * x + 0.03) / (x * (2.43 * x + 0.59) + 0.14)


def look_table(size: int = 33, sat: float = 1.08) -> np.ndarray:
    """The example look as an (N, N, N, 3) table indexed [r, g, b] over the input domain 0..1.

    Per-channel filmic curve (ACES fit), then saturation about Rec.709 luma, clamped at 0.
    """
    axis = np.linspace(0.0, 1.0, size)
    r, g, b = np.meshgrid(axis, axis, axis, indexing="ij")
    rgb = aces_filmic(np.stack([r, g, b], axis=-1))
    luma = (rgb @ LUMA_709)[..., None]
    return np.clip(luma + sat * (rgb - luma), 0.0, None).astype(np.float32)


def write_cube(path: Path, table: np.ndarray, title: str) -> None:
    """Write an Iridas/Resolve .cube: red index fastest, blue slowest, six decimals."""
    size = table.shape[0]
    rows = table.transpose(2, 1, 0, 3).reshape(-1, 3)  # [b, g, r] order: red changes fastest
    lines = [
        f'TITLE "{title}"',
        "# Filmic tone curve (ACES fit) + 8% saturation. Input: scene-linear 0..1 (above 1 clips);",
        "# made by examples/make_examples.py",
        f"LUT_3D_SIZE {size}",
        "DOMAIN_MIN 0.0 0.0 0.0",
        "DOMAIN_MAX 1.0 1.0 1.0",
    ]
    lines += [f"{a:.6f} {b:.6f} {c:.6f}" for a, b, c in rows]
    path.write_text("\n".join(lines) + "\n")


def _correction(cdl: CdlValues, indent: str = "") -> str:
    """One ASC CDL ColorCorrection element, each line prefixed by `indent`."""

    def triple(values: tuple[float, float, float]) -> str:
        return " ".join(f"{v:.6g}" for v in values)

    lines = [
        f'<ColorCorrection id="{cdl.id}">',
        f"    <Description>{cdl.description}</Description>",
        "    <SOPNode>",
        f"        <Slope>{triple(cdl.slope)}</Slope>",
        f"        <Offset>{triple(cdl.offset)}</Offset>",
        f"        <Power>{triple(cdl.power)}</Power>",
        "    </SOPNode>",
        "    <SatNode>",
        f"        <Saturation>{cdl.sat:.6g}</Saturation>",
        "    </SatNode>",
        "</ColorCorrection>",
    ]
    return "".join(f"{indent}{line}\n" for line in lines)


def write_cc(path: Path, cdl: CdlValues) -> None:
    """Write one ASC CDL ColorCorrection (.cc) as OpenColorIO and Resolve read it."""
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n' + _correction(cdl))


def write_ccc(path: Path, cdls: list[CdlValues]) -> None:
    """Write an ASC CDL ColorCorrectionCollection (.ccc): one correction per shot, picked with `--id`."""
    body = "".join(_correction(cdl, "    ") for cdl in cdls)
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<ColorCorrectionCollection>\n'
                    f"{body}</ColorCorrectionCollection>\n")


def make_examples(out_dir: Path, width: int = 640, height: int = 360) -> list[Path]:
    """Write plate.exr, look.cube, grade.cc and shots.ccc into `out_dir`; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    plate, look, grade, shots = (out_dir / name for name in (PLATE_NAME, LOOK_NAME, GRADE_NAME, SHOTS_NAME))
    extra = {
        "owner": "oxi examples",
        "comments": "Synthetic scene-linear plate made by examples/make_examples.py",
        "oxi/example": "plate v1",  # a custom attribute that must survive processing
    }
    write_exr(plate, render_plate(width, height, grain=0.004), extra)
    write_cube(look, look_table(33), "oxi example filmic look")
    write_cc(grade, GRADE)
    write_ccc(shots, SHOTS)
    return [plate, look, grade, shots]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write into (default: examples/)")
    parser.add_argument("--size", default="640x360", help="plate size WxH (default 640x360)")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.lower().split("x"))
    for path in make_examples(args.out, width, height):
        print(f"{path}  {path.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
