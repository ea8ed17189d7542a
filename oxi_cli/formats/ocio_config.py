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


def _suggest(kind: str, name: str, known: Iterable[str], config: Any) -> UsageError:
    known = sorted(set(known))
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.4)
    lowered = {k.lower(): k for k in known}
    close += [lowered[k] for k in difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.4)]
    hint = f"; closest: {', '.join(dict.fromkeys(close))}" if close else ""
    return UsageError(f"unknown {kind} {name!r} in OCIO config {config.getName() or 'given'}{hint} "
                      f"(`oxi colorspace --list` shows them)")


def space_names(config: Any) -> list[str]:
    """Every name OCIO resolves to a colour space: names, aliases and roles."""
    OCIO = ocio()
    names = []
    for cs in config.getColorSpaces(OCIO.SEARCH_REFERENCE_SPACE_ALL, OCIO.COLORSPACE_ALL):
        names += [cs.getName(), *cs.getAliases()]
    return names + list(config.getRoleNames())


def resolve_space(config: Any, name: str) -> str:
    """A colour space's canonical name from a name, alias or role, case-insensitively (as OCIO does)."""
    cs = config.getColorSpace(name)
    if cs is None:
        raise _suggest("colour space", name, space_names(config), config)
    return cs.getName()


def resolve_display(config: Any, name: str) -> str:
    displays = list(config.getDisplays())
    found = {d.lower(): d for d in displays}.get(name.lower()) or config.getCanonicalDisplayName(name)
    if not found:
        raise _suggest("display", name, displays, config)
    return found


def resolve_view(config: Any, display: str, name: str) -> str:
    views = list(config.getViews(display))
    found = {v.lower(): v for v in views}.get(name.lower())
    if not found:
        raise _suggest(f"view of display {display!r}", name, views, config)
    return found


def resolve_looks(config: Any, looks: str) -> str:
    """A look list as OCIO writes it ('+a, -b'); each name must exist."""
    known = [lk.getName() for lk in config.getLooks()]
    for part in (p.strip().lstrip("+-") for p in looks.split(",")):
        if part and config.getLook(part) is None:
            raise _suggest("look", part, known, config)
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
