"""OpenColorIO configs: which config, names resolved as OCIO resolves them, and the processors oxi translates."""

from __future__ import annotations

import difflib
import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from oxi_cli.colour_tags import ColourTag
from oxi_cli.errors import InputError, UsageError

DEFAULT_CONFIG = "ocio://default"
# A Color Interop ID among a space's aliases (configs before OCIO 2.5 have no interop_id): [namespace:]a_b_scene.
_INTEROP_ALIAS = re.compile(r"^(?:[a-z0-9]+:)?[a-z0-9]+_[a-z0-9]+_(?:scene|display)$")
# What a view's colour space is when it is the display's own (OCIO's shared views).
_USE_DISPLAY_NAME = "<USE_DISPLAY_NAME>"


def ocio() -> Any:
    """PyOpenColorIO, imported on first use: jobs without colour management never pay its 20-70 ms."""
    import PyOpenColorIO

    return PyOpenColorIO


def config_source(spec: str | None) -> str:
    """--config, else $OCIO, else OCIO's built-in default (the CG config)."""
    return spec or os.environ.get("OCIO") or DEFAULT_CONFIG


def open_config(spec: str | None = None) -> Any:
    """The config a path or `ocio://` URI names (else $OCIO, else the default); a missing or broken one is one
    line, exit 2. Cached by what names it, and a file by its size and time too: a long-lived process (the
    service) opens a changed $OCIO or an edited config afresh."""
    source = config_source(spec)
    try:
        info = os.stat(source)
        stamp: tuple[int, int] | None = (info.st_size, info.st_mtime_ns)
    except OSError:  # an ocio:// URI, or a path the loader reports on
        stamp = None
    return _open_config(source, stamp)


@functools.lru_cache(maxsize=8)
def _open_config(source: str, stamp: tuple[int, int] | None) -> Any:
    OCIO = ocio()
    try:
        return OCIO.Config.CreateFromFile(source)
    except Exception as e:  # OCIO raises its own Exception types for missing files and bad YAML
        raise InputError(f"cannot load OCIO config {source}: {_one_line(e)}") from None


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def closest_names(name: str, known: Iterable[str], most: int = 3) -> list[str]:
    """The known names a mistyped or shortened one most likely meant: those holding it (`ACES 2.0` in `ACES 2.0 -
    SDR 100 nits (Rec.709)`, any case), then the closest by spelling."""
    known = sorted(set(known))
    typed = name.lower().strip()
    holding = [k for k in known if typed and typed in k.lower()]
    holding.sort(key=lambda k: (not k.lower().startswith(typed), len(k)))
    lowered = {k.lower(): k for k in known}
    close = [lowered[k] for k in difflib.get_close_matches(typed, list(lowered), n=most, cutoff=0.4)]
    return list(dict.fromkeys(holding + close))[:most]


def _suggest(kind: str, name: str, known: Iterable[str], config: Any, lister: str = "colorspace") -> UsageError:
    known = sorted(set(known))
    close = closest_names(name, known)
    if close:
        hint = f"; closest: {', '.join(close)}"
    elif len(known) <= 8:  # a display's few views: all of them say more than a pointer to a list
        hint = f"; it has {', '.join(known) or 'none'}"
    else:
        hint = ""
    return UsageError(f"unknown {kind} {name!r} in OCIO config {config.getName() or 'given'}{hint} "
                      f"(`oxi {lister} --list` shows them)")


def space_names(config: Any) -> list[str]:
    """Every name OCIO resolves to a colour space: names, aliases and roles."""
    OCIO = ocio()
    names = []
    for cs in config.getColorSpaces(OCIO.SEARCH_REFERENCE_SPACE_ALL, OCIO.COLORSPACE_ALL):
        names += [cs.getName(), *cs.getAliases()]
    return names + list(config.getRoleNames())


# Names oiiotool users type that a config may not hold, and the Color Interop IDs they mean: `sRGB` and `linear`
# as OpenImageIO resolves them (its informal aliases, tried after the config's own names), and the common
# spellings of spaces the configs name otherwise (never a bare `Rec2020` or `P3`: linear or encoded?). `Rec709`
# is the Rec.709 camera curve (OIIO's built-in transform) or the BT.1886 display encoding: a config holding both
# leaves it ambiguous.
INFORMAL_NAMES: dict[str, tuple[str, ...]] = {
    "srgb": ("srgb_rec709_scene",),
    "linear": ("lin_rec709_scene",),
    "lin_srgb": ("lin_rec709_scene",),
    "lin_rec709": ("lin_rec709_scene",),
    "rec709": ("ocio:itu709_rec709_scene", "g24_rec709_scene"),
    "acescg": ("lin_ap1_scene",),
    "aces": ("lin_ap0_scene",),
    "aces2065-1": ("lin_ap0_scene",),
    "acescct": ("ocio:acescct_ap1_scene",),
    "acescc": ("ocio:acescc_ap1_scene",),
    "lin_rec2020": ("lin_rec2020_scene",),
}


def _informal(config: Any, name: str) -> list[str]:
    """The config's colour spaces an informal name may mean: those whose interop ID, or an alias, is one of the
    IDs the name stands for."""
    ids = {i.lower() for i in INFORMAL_NAMES.get(name.strip().lower(), ())}
    if not ids:
        return []
    OCIO = ocio()
    found = []
    for cs in config.getColorSpaces(OCIO.SEARCH_REFERENCE_SPACE_ALL, OCIO.COLORSPACE_ALL):
        own = cs.getInteropID() if hasattr(cs, "getInteropID") else ""
        if ids & {s.lower() for s in (own, *cs.getAliases()) if s}:
            found.append(cs.getName())
    return found


def resolve_space(config: Any, name: str) -> str:
    """A colour space's canonical name from a name, alias or role, case-insensitively (as OCIO does), else from
    a name oiiotool users type (`sRGB`, `linear`) where the config holds exactly one space it can mean."""
    cs = config.getColorSpace(name)
    if cs is not None:
        return cs.getName()
    meant = _informal(config, name)
    if len(meant) > 1:
        raise UsageError(f"colour space {name!r} is ambiguous in OCIO config {config.getName() or 'given'}: it may "
                         f"be {' or '.join(repr(m) for m in meant)}; give one of them")
    if not meant:
        raise _suggest("colour space", name, space_names(config), config)
    return meant[0]


def informal_note(config: Any, name: str) -> str | None:
    """What a name the config does not hold was taken as (`'sRGB' is taken as 'sRGB Encoded Rec.709 (sRGB)'`),
    for one line on stderr; None when the config knows the name itself."""
    if config.getColorSpace(name) is not None:
        return None
    chosen = resolve_space(config, name)
    return f"colour space {name!r} is taken as {chosen!r}, the config's only space by that common name"


def resolve_display(config: Any, name: str) -> str:
    displays = list(config.getDisplays())
    found = {d.lower(): d for d in displays}.get(name.lower()) or config.getCanonicalDisplayName(name)
    if not found:
        raise _suggest("display", name, displays, config, "display")
    return found


def resolve_view(config: Any, display: str, name: str) -> str:
    views = list(config.getViews(display))
    found = {v.lower(): v for v in views}.get(name.lower())
    if not found:
        raise _suggest(f"view of display {display!r}", name, views, config, "display")
    return found


def resolve_looks(config: Any, looks: str) -> str:
    """A look list as OCIO writes it ('+a, -b'); each name must exist."""
    known = [lk.getName() for lk in config.getLooks()]
    for part in (p.strip().lstrip("+-") for p in looks.split(",")):
        if part and config.getLook(part) is None:
            raise _suggest("look", part, known, config, "display")
    return looks


@dataclass(frozen=True)
class Conversion:
    """What to convert, as written (names resolve when the processor is built): a colour space pair, or a
    display/view (optionally inverse, with looks)."""

    source: str
    target: str | None = None
    display: str | None = None
    view: str | None = None
    looks: str | None = None
    inverse: bool = False
    config: str | None = None

    def describe(self) -> str:
        if self.target is not None:
            return f"{self.source} -> {self.target}"
        arrow = "<-" if self.inverse else "->"
        look = f" (look {self.looks})" if self.looks else ""
        return f"{self.source} {arrow} {self.display} / {self.view}{look}"


def processor(conversion: Conversion) -> Any:
    """OCIO's processor for a conversion, every name checked first (unknown names: one line, exit 2)."""
    OCIO = ocio()
    config = open_config(conversion.config)
    source = resolve_space(config, conversion.source)
    try:
        if conversion.target is not None:
            return config.getProcessor(source, resolve_space(config, conversion.target))
        if conversion.display is None or conversion.view is None:
            raise UsageError("a display conversion needs --display and --view")
        display = resolve_display(config, conversion.display)
        view = resolve_view(config, display, conversion.view)
        direction = OCIO.TRANSFORM_DIR_INVERSE if conversion.inverse else OCIO.TRANSFORM_DIR_FORWARD
        dvt = OCIO.DisplayViewTransform(src=source, display=display, view=view)
        if not conversion.looks:
            dvt.setDirection(direction)
            return config.getProcessor(dvt)
        pipeline = OCIO.LegacyViewingPipeline()
        pipeline.setDisplayViewTransform(dvt)
        pipeline.setLooksOverrideEnabled(True)
        pipeline.setLooksOverride(resolve_looks(config, conversion.looks))
        return _viewing(config, pipeline, direction)
    except UsageError:
        raise
    except Exception as e:
        raise InputError(f"OCIO cannot build {conversion.describe()}: {_one_line(e)}") from None


def conversion_spaces(conversion: Conversion) -> tuple[ColourTag | None, ColourTag | None]:
    """The colour spaces a conversion goes from and to, as tags for its ops (ColorOp.input_space/output_space):
    a display/view renders into the view's display colour space; its inverse goes from there to the source."""
    config = open_config(conversion.config)
    source = resolve_space(config, conversion.source)
    if conversion.target is not None:
        return colour_tag(config, source), colour_tag(config, resolve_space(config, conversion.target))
    if conversion.display is None or conversion.view is None:
        return colour_tag(config, source), None
    display = resolve_display(config, conversion.display)
    view = resolve_view(config, display, conversion.view)
    rendered = config.getDisplayViewColorSpaceName(display, view)
    rendered = display if rendered == _USE_DISPLAY_NAME else rendered
    ends = (colour_tag(config, source), colour_tag(config, rendered))
    return ends[::-1] if conversion.inverse else ends


def colour_tag(config: Any, name: str) -> ColourTag | None:
    """A config's colour space as an output's tag: its name, interop ID (the space's own, else an alias written
    as one), every spelling the config resolves to it, and whether it is display-referred."""
    OCIO = ocio()
    cs = config.getColorSpace(name)
    if cs is None:
        return None
    aliases = list(cs.getAliases())
    own = cs.getInteropID() if hasattr(cs, "getInteropID") else ""
    interop = own or next((a for a in aliases if _INTEROP_ALIAS.match(a)), None)
    roles = [role for role, space in config.getRoles() if _name(config.getColorSpace(space)) == cs.getName()]
    spellings = frozenset(s.lower() for s in (cs.getName(), *aliases, *roles, *([interop] if interop else [])))
    display = cs.getReferenceSpaceType() == OCIO.REFERENCE_SPACE_DISPLAY
    return ColourTag(cs.getName(), interop, spellings, display)


def _name(cs: Any) -> str | None:
    return None if cs is None else cs.getName()


def _viewing(config: Any, pipeline: Any, direction: Any) -> Any:
    """A viewing pipeline's processor in either direction (the pipeline itself only goes forward)."""
    OCIO = ocio()
    forward = pipeline.getProcessor(config)
    if direction == OCIO.TRANSFORM_DIR_FORWARD:
        return forward
    group = forward.createGroupTransform()
    group.setDirection(OCIO.TRANSFORM_DIR_INVERSE)
    return config.getProcessor(group)


def listing(config: Any) -> dict[str, Any]:
    """The config's colour spaces (with aliases and family), roles, displays with their views, and looks."""
    OCIO = ocio()
    spaces = [
        {"name": cs.getName(), "aliases": list(cs.getAliases()), "family": cs.getFamily(),
         "reference": "display" if cs.getReferenceSpaceType() == OCIO.REFERENCE_SPACE_DISPLAY else "scene"}
        for cs in config.getColorSpaces(OCIO.SEARCH_REFERENCE_SPACE_ALL, OCIO.COLORSPACE_ALL)
    ]
    return {
        "config": config.getName(),
        "colorspaces": spaces,
        "roles": dict(config.getRoles()),
        "displays": {d: list(config.getViews(d)) for d in config.getDisplays()},
        "looks": [lk.getName() for lk in config.getLooks()],
    }
