"""The tags a conversion gives its output come from the OCIO config (names, aliases, roles, interop IDs), the
chromaticities from OpenEXR's own table of interop IDs and OCIO's matrices agree, and what a header declares is
read as the Color Interop Forum reads an EXR."""

from __future__ import annotations

import numpy as np
import OpenEXR
import PyOpenColorIO as OCIO
import pytest

from oxi_cli.colour_tags import PRIMARIES, ColourTag, declared, disagrees, primaries_named
from oxi_cli.formats.ocio_config import Conversion, colour_tag, conversion_spaces
from oxi_cli.io.exr import tag_colour

STUDIO = "ocio://studio-config-latest"
LINEAR = {"rec709": "lin_rec709_scene", "ap0": "lin_ap0_scene", "ap1": "lin_ap1_scene", "p3d65": "lin_p3d65_scene",
          "rec2020": "lin_rec2020_scene", "adobergb": "lin_adobergb_scene"}


@pytest.mark.parametrize(("word", "interop_id"), LINEAR.items())
def test_the_primaries_are_openexrs_for_its_interop_ids(word: str, interop_id: str):
    np.testing.assert_allclose(PRIMARIES[word][1], OpenEXR.colorInteropIDToChromaticities(interop_id), atol=1e-7)
    assert OpenEXR.chromaticitiesToColorInteropID(PRIMARIES[word][1]) == interop_id


def _rgb_to_xyz(xy: tuple[float, ...]) -> np.ndarray:
    """The RGB -> XYZ matrix of chromaticities (white at Y = 1), as SMPTE RP 177 derives it."""
    xyz = np.array([[x / y, 1.0, (1 - x - y) / y] for x, y in np.reshape(xy, (4, 2))])
    primaries, white = xyz[:3].T, xyz[3]
    return primaries * np.linalg.solve(primaries, white)


@pytest.mark.parametrize(("space", "reference"), [
    ("Linear P3-D65", "Linear Rec.709 (sRGB)"), ("Linear Rec.2020", "Linear Rec.709 (sRGB)"),
    ("Linear AdobeRGB", "Linear Rec.709 (sRGB)"), ("ACEScg", "ACES2065-1"),
])
def test_the_chromaticities_give_the_matrices_ocio_converts_with(space: str, reference: str):
    """Between spaces of one white point OCIO adapts nothing: its matrix is the one both spaces' primaries give."""
    config = OCIO.Config.CreateFromFile(STUDIO)
    ours, theirs = colour_tag(config, space), colour_tag(config, reference)
    want = np.linalg.solve(_rgb_to_xyz(theirs.chromaticities), _rgb_to_xyz(ours.chromaticities))
    cpu = config.getProcessor(space, reference).getDefaultCPUProcessor()
    got = np.array([cpu.applyRGB(list(row)) for row in np.eye(3, dtype=np.float32)]).T
    np.testing.assert_allclose(got, want, atol=1e-6)  # float32 arithmetic: 5e-8 seen


def test_a_tag_has_the_configs_id_and_every_name_that_means_the_space():
    config = OCIO.Config.CreateFromFile(STUDIO)
    tag = colour_tag(config, "scene_linear")
    assert (tag.name, tag.interop_id, tag.display) == ("ACEScg", "lin_ap1_scene", False)
    assert {"acescg", "aces - acescg", "lin_ap1", "lin_ap1_scene", "scene_linear"} <= tag.spellings
    log = colour_tag(config, "ACEScct")
    assert (log.interop_id, log.primaries, log.chromaticities) == ("ocio:acescct_ap1_scene", "ap1", None)


def test_a_config_without_interop_ids_gives_the_alias_written_as_one():
    config = OCIO.Config.CreateRaw()
    cs = OCIO.ColorSpace(name="plate_linear")
    cs.addAlias("lin_p3d65_scene")
    config.addColorSpace(cs)
    assert colour_tag(config, "plate_linear").interop_id == "lin_p3d65_scene"


def test_a_display_renders_into_the_views_display_space_and_inverts_back():
    forward = Conversion("ACEScg", display="sRGB - Display", view="ACES 2.0 - SDR 100 nits (Rec.709)", config=STUDIO)
    source, target = conversion_spaces(forward)
    assert (source.name, target.name, target.interop_id, target.display) == (
        "ACEScg", "sRGB - Display", "srgb_rec709_display", True)
    inverse = Conversion("ACEScg", display="sRGB - Display", view="Un-tone-mapped", inverse=True, config=STUDIO)
    assert [t.name for t in conversion_spaces(inverse)] == ["sRGB - Display", "ACEScg"]


def test_what_a_header_declares_comes_in_the_forums_order():
    ap1 = PRIMARIES["ap1"][1]
    both = {"acesImageContainerFlag": 1, "colorInteropID": "lin_ap1_scene", "chromaticities": ap1}
    assert declared(both).value == "lin_ap0_scene"
    assert declared({"colorInteropID": "unknown", "oiio:ColorSpace": "ACEScg"}).attribute == "oiio:ColorSpace"
    assert declared({"colorInteropID": "data"}) is None
    assert declared({"chromaticities": [a + 4e-4 for a in ap1]}).primaries == "ap1"
    assert primaries_named([a + 2e-3 for a in ap1]) is None


def test_a_file_disagrees_only_where_it_names_another_space():
    tag = ColourTag("ACEScct", "ocio:acescct_ap1_scene", frozenset({"acescct", "ocio:acescct_ap1_scene"}))
    assert not disagrees(declared({"oiio:ColorSpace": "ACEScct"}), tag)
    assert disagrees(declared({"colorInteropID": "lin_ap1_scene"}), tag)  # linear is not the log encoding
    assert not disagrees(declared({"chromaticities": PRIMARIES["ap1"][1]}), tag)  # the log space's primaries
    assert disagrees(declared({"chromaticities": PRIMARIES["rec709"][1]}), tag)
    lin = ColourTag("lin", "lin_p3d65_scene", frozenset({"lin"}))
    odd = (0.6, 0.3, 0.3, 0.6, 0.15, 0.06, 0.3127, 0.329)  # no known primaries: compared as numbers
    assert disagrees(declared({"chromaticities": odd}), lin)
    assert not disagrees(declared({"chromaticities": odd}), ColourTag("custom"))  # nothing to compare with


def test_tagging_a_header_replaces_every_stale_colour_attribute():
    header = {"chromaticities": PRIMARIES["ap0"][1], "acesImageContainerFlag": 1, "adoptedNeutral": (0.32, 0.33),
              "colorSpace": "aces", "oiio:ColorSpace": "ACES2065-1", "owner": "studio"}
    tag_colour(header, ColourTag("ACEScct", "ocio:acescct_ap1_scene"))
    assert header == {"colorInteropID": "ocio:acescct_ap1_scene", "oiio:ColorSpace": "ACEScct", "owner": "studio"}
    tag_colour(header, ColourTag("Linear Rec.2020", "lin_rec2020_scene"))
    assert header["chromaticities"] == PRIMARIES["rec2020"][1]
