"""ASC CDL XML (.cc, .ccc, .cdl) -> one Cdl op, picked by id or index as OpenColorIO does."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from oxi_cli.errors import FormatError, InputError, OpError, UsageError
from oxi_cli.formats.text import looks_like_keyword, parse_number, quote
from oxi_cli.ops import Cdl

# Real CDL files are a few KB (a big .ccc a few MB); anything larger is the wrong file or an attack.
MAX_XML_BYTES = 32 * 1024 * 1024
_SEPARATORS = re.compile(r"[\s,]+")
_IDS_SHOWN = 10  # an error lists at most this many of a .ccc's ids


@dataclass
class _Node:
    """An XML element with what the parser needs: local name (lower case), attributes, line, text."""

    tag: str
    attrib: dict[str, str]
    line: int
    children: list[_Node] = field(default_factory=list)
    text: str = ""

    def find_all(self, tag: str) -> list[_Node]:
        return [c for c in self.children if c.tag == tag]

    def find_last(self, tag: str) -> _Node | None:
        # OCIO keeps the last of repeated elements; so do we.
        found = self.find_all(tag)
        return found[-1] if found else None

    def iter(self, tag: str) -> list[_Node]:
        out, stack = [], [self]
        while stack:
            node = stack.pop()
            if node.tag == tag:
                out.append(node)
            stack.extend(reversed(node.children))
        return out


@dataclass(frozen=True)
class Correction:
    """One ColorCorrection: its id ('' when absent), line, and values."""

    id: str
    line: int
    slope: tuple[float, float, float]
    offset: tuple[float, float, float]
    power: tuple[float, float, float]
    sat: float


def parse_cdl(
    data: bytes, path: str | Path, cc_id: str | None = None, style: str = "noclamp", id_option: str | None = None
) -> Cdl:
    """Parse a .cc / .ccc / .cdl file's bytes and return the chosen correction as a Cdl op.

    No id (or an empty one) takes the first correction, as OCIO's FileTransform does, unless `id_option` (the
    option that picks one, for the message) asks for an id wherever the file holds several: taking the first
    in silence grades the wrong shot. Otherwise the id is matched against the ColorCorrection ids, then tried
    as a 0-based index (both as OCIO's cccid).
    """
    corrections = read_corrections(data, path)
    if id_option is not None and cc_id is None and len(corrections) > 1:
        ids = [c.id or f"#{n}" for n, c in enumerate(corrections)]
        listed = ", ".join(ids[:12]) + (f", ... ({len(ids)} in all)" if len(ids) > 12 else "")
        raise UsageError(
            f"{path} holds {len(ids)} corrections ({listed}); pick one with {id_option} "
            f"(an id, or an index 0..{len(ids) - 1})"
        )
    chosen = select(corrections, path, cc_id)
    try:
        return Cdl(chosen.slope, chosen.offset, chosen.power, chosen.sat, style)  # type: ignore[arg-type]
    except OpError as exc:
        raise FormatError(path, chosen.line, str(exc)) from None


def read_corrections(data: bytes, path: str | Path) -> list[Correction]:
    """Every ColorCorrection in document order, whatever the root (OCIO accepts any of the three)."""
    if len(data) > MAX_XML_BYTES:
        raise FormatError(
            path, None, f"file is {len(data) / 2**20:.0f} MiB; CDL XML over {MAX_XML_BYTES // 2**20} MiB is refused"
        )
    root = _parse_xml(data, path)
    nodes = root.iter("colorcorrection")
    if not nodes:
        root_tag = f"<{root.tag}>" if looks_like_keyword(root.tag) else "the root element"
        raise FormatError(path, root.line, f"no ColorCorrection element under {root_tag}; expected ASC CDL XML")
    out: list[Correction] = []
    first_line: dict[str, int] = {}
    for node in nodes:
        cid = node.attrib.get("id", "")
        if cid in first_line:
            raise FormatError(
                path,
                node.line,
                f"ColorCorrection id {quote(cid)} repeated (first at line {first_line[cid]}); ids must be unique",
            )
        if cid:
            first_line[cid] = node.line
        out.append(_correction(node, cid, path))
    return out


def select(corrections: list[Correction], path: str | Path, cc_id: str | None) -> Correction:
    """The first correction for no id; else the one with that id; else the id read as a 0-based index."""
    if not cc_id:
        return corrections[0]
    for c in corrections:
        if c.id == cc_id:
            return c
    if re.fullmatch(r"[+-]?\d+", cc_id.strip()) and 0 <= int(cc_id) < len(corrections):
        return corrections[int(cc_id)]
    ids = [_shown_id(c.id) for c in corrections if c.id]
    shown = ", ".join(ids[:_IDS_SHOWN]) + (f" and {len(ids) - _IDS_SHOWN} more" if len(ids) > _IDS_SHOWN else "")
    present = f"ids present: {shown}" if ids else "the corrections have no ids"
    raise InputError(
        f"{path}: no ColorCorrection with id {cc_id!r}; {present} (or give an index 0..{len(corrections) - 1})"
    )


def _shown_id(cid: str) -> str:
    # Ids are shown bare, as written, when quote() would show them at all; otherwise its description.
    shown = quote(cid)
    return cid if shown == repr(cid) else shown


def _correction(node: _Node, cid: str, path: str | Path) -> Correction:
    slope, offset, power = (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)
    sop = node.find_last("sopnode")
    if sop is not None:
        # As OCIO: a SOPNode must carry all three; a missing SOPNode means the identity.
        slope, offset, power = (_triple(sop, name, path) for name in ("Slope", "Offset", "Power"))
    sat = 1.0
    sat_node = node.find_last("satnode")
    if sat_node is not None:
        elt = sat_node.find_last("saturation")
        if elt is not None:
            (sat,) = _values(elt, "Saturation", 1, path)
    return Correction(cid, node.line, slope, offset, power, sat)  # type: ignore[arg-type]


def _triple(sop: _Node, name: str, path: str | Path) -> tuple[float, ...]:
    elt = sop.find_last(name.lower())
    if elt is None:
        raise FormatError(path, sop.line, f"SOPNode has no {name}; expected Slope, Offset and Power, 3 numbers each")
    return tuple(_values(elt, name, 3, path))


def _values(elt: _Node, name: str, count: int, path: str | Path) -> list[float]:
    toks = [t for t in _SEPARATORS.split(elt.text.strip()) if t]
    if len(toks) != count:
        plural = "s" if count > 1 else ""
        raise FormatError(path, elt.line, f"{name} needs {count} number{plural}, found {len(toks)}")
    return [parse_number(path, elt.line, t, name) for t in toks]


def _parse_xml(data: bytes, path: str | Path) -> _Node:
    """Build a small tree with line numbers (xml.etree keeps none) using the stdlib expat parser."""
    parser = expat.ParserCreate()
    root = _Node("#document", {}, 1)
    stack = [root]

    def start(name: str, attrs: dict[str, str]) -> None:
        local = name.rsplit(":", 1)[-1].lower()  # namespace prefixes are tolerated and dropped
        node = _Node(local, {k.rsplit(":", 1)[-1].lower(): v for k, v in attrs.items()}, parser.CurrentLineNumber)
        stack[-1].children.append(node)
        stack.append(node)

    def end(name: str) -> None:
        stack.pop()

    def chars(text: str) -> None:
        stack[-1].text += text

    def refuse_entities(*args: object) -> None:
        # Entity declarations are how "billion laughs" and external-entity attacks start; CDL needs none.
        raise FormatError(path, parser.CurrentLineNumber, "XML entity declarations are not allowed in CDL files")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.EntityDeclHandler = refuse_entities
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise FormatError(path, exc.lineno, f"malformed XML: {expat.ErrorString(exc.code)}") from None
    if not root.children:
        raise FormatError(path, None, "no XML elements; expected ASC CDL XML")
    return root.children[0]
