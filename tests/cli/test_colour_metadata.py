"""A conversion's output says what colour space it is now in (colorInteropID, oiio:ColorSpace, chromaticities where
the space is linear with known primaries), never what the input was; a file that declares another space than the
conversion's --from is warned about in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from tests.cli.conftest import hdr_rgba, read_exr, run_oxi, write_exr

STUDIO = "ocio://studio-config-latest"
AP1 = (0.713, 0.293, 0.165, 0.830, 0.128, 0.044, 0.32168, 0.33767)
P3D65 = (0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.3127, 0.3290)
COLOUR = ("colorInteropID", "oiio:ColorSpace", "chromaticities", "acesImageContainerFlag", "adoptedNeutral")


def _colour(header: dict) -> dict:
    return {k: header[k] for k in COLOUR if k in header}


@pytest.fixture
def acescg(tmp_path: Path) -> Path:
    """An ACEScg render that says so three ways, as renderers and OIIO write them."""
    return write_exr(tmp_path / "render.exr", hdr_rgba(24, 32), shot="sh010", chromaticities=AP1,
                     colorInteropID="lin_ap1_scene", **{"oiio:ColorSpace": "ACEScg"})


def test_colorspace_output_is_tagged_with_its_new_space_and_oiio_reads_it(acescg: Path, tmp_path: Path):
    import OpenImageIO as oiio

    out = tmp_path / "p3.exr"
    res = run_oxi("colorspace", str(acescg), str(out), "--from", "ACEScg", "--to", "Linear P3-D65", "--config", STUDIO)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    header, _ = read_exr(out)
    colour = _colour(header)
    np.testing.assert_allclose(colour.pop("chromaticities"), P3D65, atol=1e-7)
    assert colour == {"colorInteropID": "lin_p3d65_scene", "oiio:ColorSpace": "Linear P3-D65"}
    assert header["shot"] == "sh010"  # the other attributes stay
    spec = oiio.ImageInput.open(str(out)).spec()
    assert spec.get_string_attribute("oiio:ColorSpace") == "lin_p3d65_scene"


def test_a_log_output_carries_its_id_and_no_chromaticities(acescg: Path, tmp_path: Path):
    out = tmp_path / "cct.exr"
    res = run_oxi("colorspace", str(acescg), str(out), "--from", "ACEScg", "--to", "ACEScct", "--config", STUDIO)
    assert res.returncode == 0, res.stderr
    assert _colour(read_exr(out)[0]) == {"colorInteropID": "ocio:acescct_ap1_scene", "oiio:ColorSpace": "ACEScct"}


def test_a_display_output_is_tagged_with_the_display_space_and_its_inverse_with_the_scene_space(
        acescg: Path, tmp_path: Path):
    shown, back = tmp_path / "shown.exr", tmp_path / "back.exr"
    args = ("--display", "sRGB - Display", "--view", "Un-tone-mapped", "--config", STUDIO)
    assert run_oxi("display", str(acescg), str(shown), "--from", "ACEScg", *args).returncode == 0
    assert _colour(read_exr(shown)[0]) == {"colorInteropID": "srgb_rec709_display", "oiio:ColorSpace": "sRGB - Display"}
    res = run_oxi("display", str(shown), str(back), "--from", "ACEScg", *args, "--inverse")
    assert res.returncode == 0 and res.stderr == "", res.stderr  # the display tag is what --inverse takes
    colour = _colour(read_exr(back)[0])
    np.testing.assert_allclose(colour.pop("chromaticities"), AP1, atol=1e-7)
    assert colour == {"colorInteropID": "lin_ap1_scene", "oiio:ColorSpace": "ACEScg"}


def test_run_tags_the_output_with_the_last_conversion_and_streaming_writes_the_same_header(
        acescg: Path, tmp_path: Path):
    chain = ("--colorspace", "ACEScg:ACEScct", "--cdl", "sat=0.9", "--colorspace", "ACEScct:lin_rec2020",
             "--config", STUDIO)
    single, bands = tmp_path / "single.exr", tmp_path / "bands.exr"
    assert run_oxi("run", str(acescg), str(single), *chain).returncode == 0
    res = run_oxi("run", str(acescg), str(bands), *chain, "--strategy", "streaming")
    assert res.returncode == 0, res.stderr
    assert _colour(read_exr(single)[0])["colorInteropID"] == "lin_rec2020_scene"
    assert _colour(read_exr(bands)[0]).keys() == _colour(read_exr(single)[0]).keys()
    assert str(_colour(read_exr(bands)[0])) == str(_colour(read_exr(single)[0]))


def test_a_grade_alone_keeps_the_input_tags(acescg: Path, tmp_path: Path):
    out = tmp_path / "graded.exr"
    assert run_oxi("cdl", str(acescg), str(out), "--sat", "0.9").returncode == 0
    assert str(_colour(read_exr(out)[0])) == str(_colour(read_exr(acescg)[0]))


@pytest.mark.parametrize(
    ("attrs", "warned"),
    [
        ({"colorInteropID": "lin_p3d65_scene"}, "lin_p3d65_scene (colorInteropID)"),
        ({"oiio:ColorSpace": "ACEScct"}, "ACEScct (oiio:ColorSpace)"),
        ({"chromaticities": P3D65}, "P3-D65 primaries (chromaticities)"),
        ({"acesImageContainerFlag": 1}, "lin_ap0_scene (acesImageContainerFlag)"),
        # what the file says agrees with --from: an alias, the ID, AP1 primaries; "unknown" says nothing
        ({"oiio:ColorSpace": "ACES - ACEScg"}, None),
        ({"colorInteropID": "lin_ap1_scene", "chromaticities": AP1}, None),
        ({"chromaticities": AP1}, None),
        ({"colorInteropID": "unknown"}, None),
    ],
)
def test_a_from_that_contradicts_the_file_is_one_warning_line(tmp_path: Path, attrs: dict, warned: str | None):
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(8, 8), **attrs)
    res = run_oxi("colorspace", str(plate), str(tmp_path / "out.exr"), "--from", "ACEScg", "--to", "ACEScct",
                  "--config", STUDIO)
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    if warned is None:
        assert lines == []
        return
    assert len(lines) == 1, res.stderr
    assert warned in lines[0] and "ACEScg" in lines[0] and "--from" in lines[0]


def test_a_tiff_loses_its_icc_profile_when_converted_and_keeps_it_when_graded(tmp_path: Path):
    import tifffile

    icc = b"\x00\x00\x02\x0cfake-profile" + bytes(500)
    rgb = np.random.default_rng(2).random((16, 24, 3), dtype=np.float32)
    tifffile.imwrite(tmp_path / "in.tif", rgb, photometric="rgb", iccprofile=icc)
    converted, graded = tmp_path / "converted.tif", tmp_path / "graded.tif"
    assert run_oxi("colorspace", str(tmp_path / "in.tif"), str(converted), "--from", "Linear Rec.709 (sRGB)",
                   "--to", "ACEScg", "--config", STUDIO).returncode == 0
    assert run_oxi("cdl", str(tmp_path / "in.tif"), str(graded), "--sat", "0.9").returncode == 0
    with tifffile.TiffFile(converted) as tif:
        assert tif.pages.first.iccprofile is None
    with tifffile.TiffFile(graded) as tif:
        assert tif.pages.first.iccprofile == icc


def test_a_part_without_colour_keeps_its_own_tags(tmp_path: Path):
    rgba = hdr_rgba(8, 8)
    beauty = {"R": rgba[..., 0], "G": rgba[..., 1], "B": rgba[..., 2]}
    depth = {"Z": rgba[..., 3]}
    parts = [OpenEXR.Part({"colorInteropID": "lin_ap1_scene", "compression": OpenEXR.ZIP_COMPRESSION}, beauty, "rgb"),
             OpenEXR.Part({"colorInteropID": "data", "compression": OpenEXR.ZIP_COMPRESSION}, depth, "depth")]
    OpenEXR.File(parts).write(str(tmp_path / "multi.exr"))
    out = tmp_path / "out.exr"
    res = run_oxi("colorspace", str(tmp_path / "multi.exr"), str(out), "--from", "ACEScg", "--to", "ACEScct",
                  "--config", STUDIO)
    assert res.returncode == 0 and res.stderr == "", res.stderr  # "data" declares no colour space to contradict
    with OpenEXR.File(str(out), header_only=True) as f:
        ids = [p.header["colorInteropID"] for p in f.parts]
    assert ids == ["ocio:acescct_ap1_scene", "data"]
