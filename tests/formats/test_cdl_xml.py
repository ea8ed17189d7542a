"""ASC CDL XML (.cc, .ccc, .cdl) parsing against OpenColorIO's CDLTransform.CreateFromFile, and its errors."""

from __future__ import annotations

import PyOpenColorIO as OCIO
import pytest

from oxi_cli.errors import InputError
from oxi_cli.formats import cdl_xml
from oxi_cli.formats.registry import load_cdl
from oxi_cli.ops import Cdl
from tests.formats.files import expect_error, write

HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n'


def cc(
    cid: str | None,
    slope="1.1 0.95 1.2",
    offset="-0.02 0.01 0.03",
    power="0.9 1.05 1.25",
    sat="0.85",
    sat_tag="SatNode",
    extra="",
) -> str:
    ident = "" if cid is None else f' id="{cid}"'
    sat_xml = "" if sat is None else f"    <{sat_tag}>\n      <Saturation>{sat}</Saturation>\n    </{sat_tag}>\n"
    return (
        f"  <ColorCorrection{ident}>\n{extra}"
        f"    <SOPNode>\n      <Description>look</Description>\n      <Slope>{slope}</Slope>\n"
        f"      <Offset>{offset}</Offset>\n      <Power>{power}</Power>\n    </SOPNode>\n{sat_xml}"
        "  </ColorCorrection>\n"
    )


def ccc(*corrections: str) -> str:
    return (
        HEADER
        + '<ColorCorrectionCollection xmlns="urn:ASC:CDL:v1.01">\n'
        + "".join(corrections)
        + ("</ColorCorrectionCollection>\n")
    )


def cdl_list(*corrections: str) -> str:
    decisions = "".join(
        f'<ColorDecision>\n<MediaRef ref="shot{i}.exr"/>\n{c}</ColorDecision>\n' for i, c in enumerate(corrections)
    )
    return HEADER + '<ColorDecisionList xmlns="urn:ASC:CDL:v1.01">\n' + decisions + "</ColorDecisionList>\n"


def assert_matches_ocio(op: Cdl, path, cccid: str = "") -> None:
    """Slope, offset, power and saturation equal OCIO's reading of the same file and id."""
    t = OCIO.CDLTransform.CreateFromFile(str(path), cccid)
    assert op.slope == pytest.approx(t.getSlope(), rel=1e-15)
    assert op.offset == pytest.approx(t.getOffset(), rel=1e-15)
    assert op.power == pytest.approx(t.getPower(), rel=1e-15)
    assert op.sat == pytest.approx(t.getSat(), rel=1e-15)


def test_cc_matches_ocio(tmp_path):
    path = write(
        tmp_path / "look.cc",
        HEADER + cc("shot_010").replace("<ColorCorrection", '<ColorCorrection xmlns="urn:ASC:CDL:v1.2"'),
    )
    op = load_cdl(path)
    assert op.slope == (1.1, 0.95, 1.2) and op.offset == (-0.02, 0.01, 0.03)
    assert op.power == (0.9, 1.05, 1.25) and op.sat == 0.85 and op.style == "noclamp"
    assert_matches_ocio(op, path)


@pytest.mark.parametrize(
    "cc_id, cccid, want_slope",
    [
        (None, "", "1.5 1 1"),  # no id: the first, as OCIO with an empty cccid
        ("b", "b", "2 1 1"),
        ("c", "c", "3 1 1"),
        ("1", "1", "2 1 1"),  # not an id: a 0-based index, as OCIO
    ],
)
def test_ccc_picks_by_id_or_index_as_ocio(tmp_path, cc_id, cccid, want_slope):
    path = write(tmp_path / "looks.ccc", ccc(cc("a", "1.5 1 1"), cc("b", "2 1 1", sat_tag="SATNode"), cc("c", "3 1 1")))
    op = load_cdl(path, cc_id)
    assert op.slope == tuple(float(v) for v in want_slope.split())
    assert_matches_ocio(op, path, cccid)


def test_numeric_id_matches_the_id_before_the_index(tmp_path):
    path = write(tmp_path / "numeric.ccc", ccc(cc("1", "1.5 1 1"), cc("0", "2 1 1")))
    op = load_cdl(path, "0")
    assert op.slope == (2.0, 1.0, 1.0)
    assert_matches_ocio(op, path, "0")


@pytest.mark.parametrize("cc_id", [None, "q2", "1"])
def test_cdl_decision_list_matches_ocio(tmp_path, cc_id):
    path = write(tmp_path / "edit.cdl", cdl_list(cc("q1", "1.2 1 1"), cc("q2", "1.4 1 1", sat="1.3")))
    op = load_cdl(path, cc_id)
    assert op.slope[0] == (1.2 if cc_id is None else 1.4)
    assert_matches_ocio(op, path, cc_id or "")


def test_missing_sat_node_means_1_and_missing_sop_node_means_identity_as_ocio(tmp_path):
    no_sop = (
        '  <ColorCorrection id="nosop">\n    <SatNode><Saturation>0.5</Saturation></SatNode>\n  </ColorCorrection>\n'
    )
    path = write(tmp_path / "partial.ccc", ccc(cc("nosat", sat=None), no_sop))
    first = load_cdl(path, "nosat")
    assert first.sat == 1.0
    assert_matches_ocio(first, path, "nosat")
    second = load_cdl(path, "nosop")
    assert (second.slope, second.offset, second.power, second.sat) == ((1, 1, 1), (0, 0, 0), (1, 1, 1), 0.5)
    assert_matches_ocio(second, path, "nosop")


def test_unknown_elements_namespaces_and_number_spellings_are_tolerated(tmp_path):
    extra = (
        "    <Description>notes</Description>\n    <InputDescription>ARRI</InputDescription>\n"
        "    <Vendor><X/></Vendor>\n"
    )
    text = cc("x", slope=" 1e0\n 2.5E-1\t+3 ", offset="-.5, 0, 0.", power="1 1 1", extra=extra)
    path = write(
        tmp_path / "odd.cc", HEADER + text.replace("<ColorCorrection", '<ColorCorrection xmlns:a="urn:x" a:foo="1"')
    )
    op = load_cdl(path)
    assert op.slope == (1.0, 0.25, 3.0) and op.offset == (-0.5, 0.0, 0.0)
    assert_matches_ocio(op, path)


def test_prefixed_and_lower_case_element_names(tmp_path):
    # OCIO refuses both; ASC files from some tools use them, so oxi reads them.
    prefixed = (
        '<cdl:ColorCorrection xmlns:cdl="urn:ASC:CDL:v1.2" id="p"><cdl:SOPNode><cdl:Slope>2 1 1</cdl:Slope>'
        "<cdl:Offset>0 0 0</cdl:Offset><cdl:Power>1 1 1</cdl:Power></cdl:SOPNode>"
        "<cdl:SATNode><cdl:Saturation>0.5</cdl:Saturation></cdl:SATNode></cdl:ColorCorrection>"
    )
    lower = (
        '<colorcorrection id="l"><sopnode><slope>3 1 1</slope><offset>0 0 0</offset><power>1 1 1</power>'
        "</sopnode><satnode><saturation>0.25</saturation></satnode></colorcorrection>"
    )
    assert load_cdl(write(tmp_path / "p.cc", prefixed)) == Cdl((2, 1, 1), sat=0.5)
    assert load_cdl(write(tmp_path / "l.cc", lower)) == Cdl((3, 1, 1), sat=0.25)


def test_style_reaches_the_op(tmp_path):
    path = write(tmp_path / "style.cc", HEADER + cc("s"))
    assert load_cdl(path, style="asc").style == "asc"


def test_any_root_works_for_any_of_the_three_extensions(tmp_path):
    # OCIO falls back to the other CDL readers, so a .cc holding a collection reads as its first entry.
    path = write(tmp_path / "collection.cc", ccc(cc("a", "1.5 1 1"), cc("b", "2 1 1")))
    assert load_cdl(path).slope == (1.5, 1.0, 1.0)
    assert load_cdl(path, "b").slope == (2.0, 1.0, 1.0)
    assert_matches_ocio(load_cdl(path), path)


# --- malformed files and bad ids ------------------------------------------------------------------------


def test_unknown_id_lists_the_ids_present(tmp_path):
    path = write(tmp_path / "ids.ccc", ccc(cc("a"), cc("b"), cc(None)))
    with pytest.raises(InputError) as info:
        load_cdl(path, "zzz")
    msg = str(info.value)
    assert str(path) in msg and "'zzz'" in msg and "ids present: a, b" in msg and "0..2" in msg
    with pytest.raises(InputError, match="index 0..2"):
        load_cdl(path, "3")


def test_malformed_xml_names_the_line(tmp_path):
    text = HEADER + '<ColorCorrection id="a">\n  <SOPNode>\n    <Slope>1 1 1</Slope>\n</ColorCorrection>\n'
    expect_error(load_cdl, write(tmp_path / "broken.cc", text), 5, "malformed XML: mismatched tag")


@pytest.mark.parametrize(
    "text, line, needle",
    [
        ("", 1, "malformed XML: no element found"),
        ("hello, not xml", 1, "malformed XML: syntax error"),
        ("<Foo>\n<Bar/>\n</Foo>\n", 1, "no ColorCorrection element under <foo>"),
    ],
)
def test_not_cdl_xml(tmp_path, text, line, needle):
    expect_error(load_cdl, write(tmp_path / "not.cc", text), line, needle)


@pytest.mark.parametrize("missing", ["Slope", "Offset", "Power"])
def test_sop_node_without_one_of_its_values_names_the_sop_line(tmp_path, missing):
    text = HEADER + cc("a")
    text = "\n".join(line for line in text.splitlines() if f"<{missing}>" not in line) + "\n"
    expect_error(load_cdl, write(tmp_path / "sop.cc", text), 3, f"SOPNode has no {missing}")


@pytest.mark.parametrize(
    "kw, needle",
    [
        ({"slope": "1.1 1.2"}, "Slope needs 3 numbers, found 2"),
        ({"offset": "0 0 0 0"}, "Offset needs 3 numbers, found 4"),
        ({"power": ""}, "Power needs 3 numbers, found 0"),
        ({"slope": "1 x 1"}, "Slope: expected a number, found 'x'"),
        ({"slope": "1 nan 1"}, "Slope: NaN/Inf value 'nan'"),
        ({"offset": "0 0 -inf"}, "Offset: NaN/Inf value '-inf'"),
        ({"sat": "0.5 0.6"}, "Saturation needs 1 number, found 2"),
        ({"sat": "1e400"}, "Saturation: value '1e400' is out of range"),
    ],
)
def test_bad_values_name_their_element_line(tmp_path, kw, needle):
    text = HEADER + cc("a", **kw)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if f"<{needle.split(' ')[0].rstrip(':')}>" in s)
    expect_error(load_cdl, write(tmp_path / "values.cc", text), line, needle)


@pytest.mark.parametrize(
    "kw, needle",
    [
        ({"slope": "-1 1 1"}, "slope must be >= 0"),
        ({"power": "0 1 1"}, "power must be > 0"),
        ({"sat": "-0.5"}, "saturation must be >= 0"),
    ],
)
def test_out_of_range_values_name_the_correction_line(tmp_path, kw, needle):
    expect_error(load_cdl, write(tmp_path / "range.cc", HEADER + cc("a", **kw)), 2, needle)


def test_repeated_id_is_refused_as_ocio(tmp_path):
    path = write(tmp_path / "dup.ccc", ccc(cc("a"), cc("a")))
    expect_error(load_cdl, path, 14, "id 'a' repeated \\(first at line 3\\)")


def test_entity_declarations_are_refused(tmp_path):
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n <!ENTITY lol2 "&lol;&lol;">\n]>\n'
        '<ColorCorrection id="a"><SOPNode><Slope>&lol2; 1 1</Slope></SOPNode></ColorCorrection>\n'
    )
    expect_error(load_cdl, write(tmp_path / "bomb.cc", text), 3, "entity declarations are not allowed")


def test_huge_file_is_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(cdl_xml, "MAX_XML_BYTES", 1000)
    path = write(tmp_path / "huge.ccc", ccc(*(cc(f"id{i}") for i in range(20))))
    expect_error(load_cdl, path, None, "CDL XML over")
