"""What files say about their pixels' colour space: the tag a conversion gives its output, and known primaries."""

from __future__ import annotations

from dataclasses import dataclass, field

# Primaries and white point (x, y of R, G, B, W) by the primaries word of a Color Interop ID (lin_ap1_scene ->
# ap1): the spaces OpenEXR's colorInteropIDToChromaticities knows (the Color Interop Forum's OpenEXR annex), and
# CIE XYZ as OpenEXR's technical introduction writes it. tests/io pins them against OpenEXR's own table.
PRIMARIES: dict[str, tuple[str, tuple[float, ...]]] = {
    "rec709": ("Rec.709 / sRGB", (0.64, 0.33, 0.30, 0.60, 0.15, 0.06, 0.3127, 0.3290)),
    "ap0": ("ACES AP0", (0.7347, 0.2653, 0.0, 1.0, 0.0001, -0.077, 0.32168, 0.33767)),
    "ap1": ("ACES AP1", (0.713, 0.293, 0.165, 0.830, 0.128, 0.044, 0.32168, 0.33767)),
    "p3d65": ("P3-D65", (0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.3127, 0.3290)),
    "rec2020": ("Rec.2020", (0.708, 0.292, 0.170, 0.797, 0.131, 0.046, 0.3127, 0.3290)),
    "adobergb": ("Adobe RGB", (0.64, 0.33, 0.21, 0.71, 0.15, 0.06, 0.3127, 0.3290)),
    "ciexyzd65": ("CIE XYZ", (1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1 / 3, 1 / 3)),
}
# How far apart two chromaticities may lie and name the same primaries (the Color Interop Forum's +-0.001).
XY_TOLERANCE = 1e-3
# Header attributes that say which colour space the pixels are in: what `oxi info` shows, what a conversion's
# output no longer carries from its input. acesImageContainerFlag: ACES2065-1 (SMPTE ST 2065-4).
COLOUR_KEYS = ("colorInteropID", "oiio:ColorSpace", "colorSpace", "chromaticities", "whiteLuminance", "adoptedNeutral",
               "acesImageContainerFlag")
# Tags that name no colour space: none known, or a part of non-colour data (the Color Interop Forum's).
NO_SPACE_IDS = ("", "unknown", "data")
# Formats a display-referred picture is a review frame in: 8-bit (unless --out-type says otherwise), R, G, B only
# (unless `oxi display --alpha`): EXR alpha is premultiplied and PNG's is not, and a review shows the picture.
REVIEW_FORMATS = ("png", "jpeg")


@dataclass(frozen=True)
class ColourTag:
    """What a colour-space conversion says its output is (an op carries it: ops/base.py ColorOp.output_space).

    `name`: the space as the OCIO config names it; `interop_id`: its Color Interop ID (lin_ap1_scene,
    srgb_rec709_display...), None where the config gives none; `spellings`: every name the config resolves to
    this space (aliases, roles, the ID), lowercase, to tell whether a file's tag means it; `display`: a
    display-referred space (an `oxi display` output), which a PNG or JPEG holds as a review frame;
    `keep_alpha`: such a review frame keeps alpha (`oxi display --alpha`).
    """

    name: str
    interop_id: str | None = None
    spellings: frozenset[str] = field(default_factory=frozenset)
    display: bool = False
    keep_alpha: bool = False

    @property
    def primaries(self) -> str | None:
        """The primaries word of the interop ID (ap1 for ocio:acescct_ap1_scene), when it is one of PRIMARIES."""
        return primaries_of(self.interop_id)

    @property
    def chromaticities(self) -> tuple[float, ...] | None:
        """The EXR chromaticities of a linear space with known primaries (they describe linear RGB only)."""
        word = self.primaries
        if word is None or not _bare(self.interop_id or "").startswith("lin_"):
            return None
        return PRIMARIES[word][1]

    def review(self, out_format: str) -> bool:
        """Whether an output of this space in `out_format` is a review frame (REVIEW_FORMATS)."""
        return self.display and out_format in REVIEW_FORMATS

    def drops_alpha(self, out_format: str) -> bool:
        """Whether such an output leaves alpha out (a review frame, unless asked to keep it)."""
        return self.review(out_format) and not self.keep_alpha

    def means(self, tag: str) -> bool:
        """Whether a file's colour-space tag (a name, alias, role or interop ID) names this space."""
        return tag.strip().lower() in self.spellings


def _bare(interop_id: str) -> str:
    """The ID without its namespace: ocio:lin_awg3_scene -> lin_awg3_scene."""
    return interop_id.rpartition(":")[2]


def primaries_of(interop_id: str | None) -> str | None:
    """The PRIMARIES key an interop ID names (its middle word: lin_p3d65_scene -> p3d65), or None."""
    words = _bare(interop_id or "").split("_")
    return words[1] if len(words) == 3 and words[1] in PRIMARIES else None


def primaries_named(xy: object) -> str | None:
    """The PRIMARIES key whose chromaticities `xy` (8 numbers) match within XY_TOLERANCE, or None."""
    try:
        values = [float(v) for v in xy]  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        return None
    if len(values) != 8:
        return None
    for word, (_, ref) in PRIMARIES.items():
        if all(abs(a - b) <= XY_TOLERANCE for a, b in zip(values, ref, strict=True)):
            return word
    return None


@dataclass(frozen=True)
class Declared:
    """The colour space a file's header declares: the value, the attribute it came from, and its primaries."""

    value: str
    attribute: str
    primaries: str | None = None  # a PRIMARIES key, or None
    xy: tuple[float, ...] | None = None  # chromaticities as the file gives them


def declared(header: dict[str, object]) -> Declared | None:
    """What a header says the colour space is, most trusted first, as the Color Interop Forum reads an EXR:
    acesImageContainerFlag (ACES2065-1), colorInteropID (unless "unknown", or "data": no colour at all),
    oiio:ColorSpace, chromaticities."""
    if _flag(header.get("acesImageContainerFlag")):
        return Declared("lin_ap0_scene", "acesImageContainerFlag", "ap0")
    for key in ("colorInteropID", "oiio:ColorSpace"):
        value = header.get(key)
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if isinstance(value, str) and value.strip().lower() not in NO_SPACE_IDS:
            return Declared(value.strip(), key, primaries_of(value.strip()))
    chroma = header.get("chromaticities")
    if chroma is not None:
        word = primaries_named(chroma)
        try:
            xy = tuple(float(v) for v in chroma)  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            return None
        named = f"{PRIMARIES[word][0]} primaries" if word else "primaries " + ", ".join(f"{v:g}" for v in xy)
        return Declared(named, "chromaticities", word, xy)
    return None


def _flag(value: object) -> bool:
    try:
        return int(value) == 1  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return False


def disagrees(found: Declared, tag: ColourTag) -> bool:
    """Whether what a file declares contradicts `tag`, the space a conversion takes its input in. Names compare
    through the config's spellings; chromaticities by primaries (a log space has its linear space's primaries):
    where neither can tell, they do not disagree."""
    if found.attribute != "chromaticities":
        return not tag.means(found.value)
    if found.primaries is not None and tag.primaries is not None:
        return found.primaries != tag.primaries
    wanted = tag.chromaticities
    if wanted is None or found.xy is None:
        return False
    return not all(abs(a - b) <= XY_TOLERANCE for a, b in zip(found.xy, wanted, strict=True))
