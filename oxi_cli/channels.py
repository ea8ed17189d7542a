"""Which parts of a file and which channels of each a chain computes on: colour layers, views and the rest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from oxi_cli.errors import UsageError
from oxi_cli.image import COLOR_CHANNELS
from oxi_cli.ops import ColorOp, ImageOp, Op

ALL = "all"


@dataclass(frozen=True)
class LayerRule:
    """The layers colour ops grade: by default the picture (unprefixed R, G, B) and every view a `multiView`
    attribute names; `include` adds layers by name (ALL: every layer with R, G and B), `exclude` drops them."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> LayerRule:
        """`--layers` text: names separated by commas, 'all', '-NAME' to exclude."""
        if not text:
            return cls()
        include, exclude = [], []
        for token in (t.strip() for t in text.split(",")):
            if not token or token == "-":
                raise UsageError(f"--layers has an empty name in {text!r}; separate names with commas")
            (exclude if token.startswith("-") else include).append(token.lstrip("-"))
        return cls(tuple(include), tuple(exclude))

    def named(self) -> list[str]:
        return [n for n in (*self.include, *self.exclude) if n != ALL]


DEFAULT_LAYERS = LayerRule()


@dataclass(frozen=True)
class Selection:
    """What of a file a job processes: one part (`--part`, as oiiotool's --subimage) or all, and which layers."""

    part: str | None = None
    layers: LayerRule = DEFAULT_LAYERS
    mip_level: int | None = None  # 0: a mip- or rip-mapped input's top level alone (the only level oxi reads)


EVERYTHING = Selection()


@dataclass(frozen=True)
class Group:
    """Channels computed together, in kernel order: a colour layer's R, G, B (and its alpha at [3] when
    `has_alpha`), then any channels only the chain's image ops touch. `colour`: the chain's colour ops apply."""

    names: tuple[str, ...]
    has_alpha: bool
    colour: bool

    def ops(self, chain: Sequence[Op]) -> list[Op]:
        """The chain this group runs: all of it, or its image ops alone for channels no colour op touches."""
        return list(chain) if self.colour else [op for op in chain if isinstance(op, ImageOp)]


def views(header: dict[str, Any]) -> list[str]:
    """The views a `multiView` attribute names, the default (unprefixed) view first."""
    named = header.get("multiView")
    return [str(v) for v in named] if isinstance(named, (list, tuple)) else []


def _layer_of(name: str) -> tuple[str, str]:
    layer, _, channel = name.rpartition(".")
    return layer, channel


def rgb_layers(channels: Sequence[str]) -> list[str]:
    """Every layer holding R, G and B ("" for the unprefixed picture), in channel order."""
    have = set(channels)
    found = []
    for name in channels:
        layer, channel = _layer_of(name)
        prefix = f"{layer}." if layer else ""
        if channel == "R" and layer not in found and all(prefix + c in have for c in COLOR_CHANNELS):
            found.append(layer)
    return found


def colour_layers(channels: Sequence[str], header: dict[str, Any], rule: LayerRule) -> list[str]:
    """The layers of one part that colour ops grade under `rule` ("" is the unprefixed picture).

    A view's layer is graded with its base layer: `right` with the picture, `diffuse.right` with `diffuse`.
    """
    others = views(header)[1:]

    def base(layer: str) -> str:
        head, _, last = layer.rpartition(".")
        return "" if layer in others else head if last in others else layer

    graded = []
    for layer in rgb_layers(channels):
        root = base(layer)
        chosen = root == "" or ALL in rule.include or root in rule.include or layer in rule.include
        if chosen and root not in rule.exclude and layer not in rule.exclude:
            graded.append(layer)
    return graded


def check_named_layers(parts: Sequence[tuple[Sequence[str], dict[str, Any]]], rule: LayerRule) -> None:
    """A name in --layers that no part of the file has as a layer (or view) is a typo: say which exist."""
    present: set[str] = set()
    for channels, header in parts:
        present.update(rgb_layers(channels))
        present.update(views(header))
    missing = [n for n in rule.named() if n not in present]
    if missing:
        have = ", ".join(sorted(n for n in present if n)) or "only the picture's own R, G, B"
        raise UsageError(f"--layers names {', '.join(missing)}, which this file does not hold; its layers: {have}")


def channel_groups(channels: Sequence[str], ops: Sequence[Op], layers: Sequence[str]) -> list[Group]:
    """How a chain computes on one part whose colour `layers` are given (see colour_layers).

    Each colour layer is a group of its own; the first also carries every channel that only image ops touch
    (today's one run for a one-layer image: R, G, B, A first, the rest after). A colour-only chain leaves
    those channels untouched (not even converted); a chain of image ops alone computes every channel at once.
    """
    if not ops:
        return []
    image_ops = any(isinstance(op, ImageOp) for op in ops)
    colour_ops = any(isinstance(op, ColorOp) for op in ops)
    if not colour_ops:
        return [Group(tuple(channels), False, False)]
    wants_alpha = image_ops or any(isinstance(op, ColorOp) and op.touches_alpha() for op in ops)
    groups = []
    for layer in layers:
        prefix = f"{layer}." if layer else ""
        alpha = wants_alpha and prefix + "A" in channels
        groups.append(Group(tuple(prefix + c for c in (*COLOR_CHANNELS, *("A" * alpha))), alpha, True))
    if image_ops:
        taken = {name for group in groups for name in group.names}
        rest = tuple(name for name in channels if name not in taken)
        if groups:
            groups[0] = replace(groups[0], names=groups[0].names + rest)
        elif rest:
            groups.append(Group(rest, False, False))
    return groups


T = TypeVar("T")


def select_part(whole: T, part: str | None, path: object = "") -> T:
    """`whole` (an Image or ImageSpec, holding its file's other parts) reduced to the part `part` names (its
    name or 0-based index), as a one-part image; None keeps every part."""
    if part is None:
        return whole
    parts = whole.all_parts()  # type: ignore[attr-defined]
    names = [str(p.meta.header.get("name") or "") for p in parts]
    index = int(part) if part.isdigit() else (names.index(part) if part in names else None)
    if index is None or not 0 <= index < len(parts):
        listed = ", ".join(f"{i} {n}".strip() for i, n in enumerate(names))
        where = f"{path}: " if path else ""
        raise UsageError(f"{where}--part {part}: no such part; this file's parts: {listed}")
    return replace(parts[index], parts=[])
