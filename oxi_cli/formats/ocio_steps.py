"""The OpenColorIO steps users write: colour-space conversions and display/view transforms, as oxi ops."""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Callable, Mapping
from typing import Any

from oxi_cli.errors import UsageError
from oxi_cli.ops.step import FLAG, Param, Step, StepArgs

CONFIG = Param("config", "OCIO config: a file or ocio://... (default: $OCIO, else ocio://default).")
ALPHA = Param("alpha", "Keep alpha in a PNG review frame (a display-referred output; left out by default).", kind=FLAG)


def _config_names(kind: str) -> Callable[[Mapping[str, Any]], list[str]]:
    """A Param's `complete`: the names of `kind` (spaces, displays, views, looks) in the config given so far
    (else $OCIO, else OCIO's default); views are those of the display given, when there is one."""

    def names(given: Mapping[str, Any]) -> list[str]:
        from oxi_cli.formats.ocio_config import listing, open_config

        info = listing(open_config(given.get("config")))
        if kind == "spaces":
            spaces = info["colorspaces"]
            return [cs["name"] for cs in spaces] + [a for cs in spaces for a in cs["aliases"]] + list(info["roles"])
        if kind == "displays":
            return list(info["displays"])
        if kind == "views":
            views = info["displays"]
            shown = [views[given["display"]]] if given.get("display") in views else views.values()
            return list(dict.fromkeys(v for vs in shown for v in vs))
        return list(info["looks"])

    return names


def conversion_ops(conversion: Any, keep_alpha: bool = False) -> list[Any]:
    """OCIO's processor for `conversion` as oxi ops (a warning names what falls back to OCIO's CPU loop), the
    first saying which colour space it takes, the last which it leaves (ColorOp.input_space, output_space);
    `keep_alpha`: a review frame of the result keeps alpha (`oxi display --alpha`)."""
    from oxi_cli.formats.ocio_config import conversion_spaces, processor
    from oxi_cli.formats.ocio_ops import fallback_note, ops_from_processor

    ops = ops_from_processor(processor(conversion))
    for op in ops:  # values meant for the output encoding: no clipping warning for integer files
        object.__setattr__(op, "encodes_output", True)
    source, target = conversion_spaces(conversion)
    if ops:
        object.__setattr__(ops[0], "input_space", source)
        object.__setattr__(ops[-1], "output_space", target and dataclasses.replace(target, keep_alpha=keep_alpha))
    note = fallback_note(ops, conversion.describe())
    if note:
        print(f"oxi: warning: {note}", file=sys.stderr)
    return ops


def split_names(value: Any, count: int, config: str | None, label: str) -> list[str]:
    """'ACEScg:ACEScct' (or 'FROM:DISPLAY:VIEW') split at the colons that leave names the config knows:
    names and aliases may hold colons themselves ('ocio:acescct_ap1_scene')."""
    from oxi_cli.formats.ocio_config import open_config, resolve_display, resolve_space, resolve_view

    text = str(value)
    cuts = [i for i, ch in enumerate(text) if ch == ":"]
    if len(cuts) < count - 1:
        shape = "FROM:TO" if count == 2 else "FROM:DISPLAY:VIEW"
        raise UsageError(f"{label} takes {shape}, got {text!r}")
    cfg = open_config(config)
    first: list[str] | None = None
    for chosen in itertools.combinations(cuts, count - 1):
        bounds = [-1, *chosen, len(text)]
        parts = [text[a + 1 : b].strip() for a, b in itertools.pairwise(bounds)]
        first = first or parts
        try:
            resolve_space(cfg, parts[0])
            if count == 2:
                resolve_space(cfg, parts[1])
            else:
                resolve_view(cfg, resolve_display(cfg, parts[1]), parts[2])
        except UsageError:
            continue
        return parts
    return first or [text]  # no split resolves: the build names the unknown name


def _note_informal(args: StepArgs, config: str | None, *names: str) -> None:
    """Say which space a name the config lacks (`sRGB`, `linear`, as oiiotool users type them) was taken as."""
    from oxi_cli.formats.ocio_config import informal_note, open_config

    cfg = open_config(config)
    args.notes.extend(note for name in names if (note := informal_note(cfg, name)))


def _colorspace(args: StepArgs) -> list[Any]:
    from oxi_cli.formats.ocio_config import Conversion

    config = args.text("config")
    if "from" in args or "to" in args or "spaces" not in args:
        listed = ", or --list" if args.command else ""
        _refuse_missing(args, ("from", "to"), f"colour space names, aliases or roles{listed}")
        source, target = str(args.text("from")), str(args.text("to"))
    else:
        source, target = split_names(args.raw("spaces"), 2, config, args.label("spaces"))
    _note_informal(args, config, source, target)
    return conversion_ops(Conversion(source, target, config=config), keep_alpha=args.switch("alpha"))


def _refuse_missing(args: StepArgs, names: tuple[str, ...], hint: str) -> None:
    """Say which of the values a step takes together are missing (`display is missing --view`)."""
    missing = [args.label(n) for n in names if n not in args]
    if not missing:
        return
    if len(missing) < len(names):
        hint = f"it needs {_listed([args.label(n) for n in names])} together; {hint}"
    raise UsageError(f"{args.step.name} is missing {_listed(missing)} ({hint})")


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _display(args: StepArgs) -> list[Any]:
    """`FROM:DISPLAY:VIEW`, or the display alone with `from` and `view` (as the command and TOML write it)."""
    from oxi_cli.formats.ocio_config import Conversion

    config = args.text("config")
    if "from" in args or "view" in args or args.command:
        _refuse_missing(args, ("from", "display", "view"), "`oxi display --list` shows displays and views")
        source, display, view = str(args.text("from")), str(args.text("display")), str(args.text("view"))
    else:
        source, display, view = split_names(args.raw("display"), 3, config, args.label("display"))
    _note_informal(args, config, source)
    conversion = Conversion(source, display=display, view=view, looks=args.text("look"),
                            inverse=args.switch("inverse"), config=config)
    return conversion_ops(conversion, keep_alpha=args.switch("alpha"))


def _listing(args: StepArgs) -> tuple[dict[str, Any], str]:
    from oxi_cli.formats.ocio_config import listing, open_config

    info = listing(open_config(args.text("config")))
    lines = [f"config: {info['config']}", "colour spaces:"]
    for cs in info["colorspaces"]:
        aliases = f"  (aliases: {', '.join(cs['aliases'])})" if cs["aliases"] else ""
        lines.append(f"  {cs['name']}  [{cs['reference']}]{aliases}")
    lines.append("roles:")
    lines += [f"  {role} = {space}" for role, space in info["roles"].items()]
    lines.append("displays and views:")
    for disp, views in info["displays"].items():
        lines += [f"  {disp}", *(f"    {v}" for v in views)]
    lines.append("looks:" + ("" if info["looks"] else " none"))
    lines += [f"  {lk}" for lk in info["looks"]]
    return info, "\n".join(lines)


def _display_listing(args: StepArgs) -> tuple[dict[str, Any], str]:
    """The config's displays with their views (only --display's, when given) and its looks."""
    from oxi_cli.formats.ocio_config import listing, open_config, resolve_display

    config = open_config(args.text("config"))
    info = listing(config)
    displays = info["displays"]
    if "display" in args:
        shown = resolve_display(config, str(args.text("display")))
        displays = {shown: displays[shown]}
    found = {"config": info["config"], "displays": displays, "looks": info["looks"]}
    lines = [f"config: {info['config']}", "displays and views:"]
    for disp, views in displays.items():
        lines += [f"  {disp}", *(f"    {v}" for v in views)]
    lines.append("looks:" + ("" if info["looks"] else " none"))
    lines += [f"  {lk}" for lk in info["looks"]]
    lines.append("(colour spaces for --from: oxi colorspace --list)")
    return found, "\n".join(lines)


COLORSPACE = Step(
    "colorspace",
    summary="Convert between two colour spaces of an OpenColorIO config.",
    value=Param("spaces", "FROM:TO colour spaces.", option="", metavar="FROM:TO"),
    params=(
        Param("from", "Input colour space.", option="--from", complete=_config_names("spaces")),
        Param("to", "Output colour space.", option="--to", complete=_config_names("spaces")),
        ALPHA,
        CONFIG,
    ),
    build=_colorspace,
    run_help="OCIO colour-space conversion (names, aliases, roles; :alpha=1)",
    listing=_listing,
    listing_help="List the config's colour spaces, roles, displays, views and looks.",
    examples="""\b
Examples:
  oxi colorspace plate.exr plate_cct.exr --from ACEScg --to ACEScct
  oxi colorspace plate.exr thumb.png --from ACEScg --to "sRGB - Texture" --config ocio://studio-config-latest
  oxi colorspace --list --config ocio://studio-config-latest
  oxi colorspace 'plate.####.exr' -o hdr.mov --from ACEScg --to "Rec.2100-PQ - Display" \\
      --config ocio://studio-config-latest        # a ProRes 422 HQ movie tagged Rec.2100 PQ
  oxi colorspace --list --json | jq '.colorspaces[].name'
\b
Names, aliases and roles resolve as OpenColorIO resolves them. OCIO builds and optimises the processor; oxi
runs its ops on its own backends (fused with the other colour ops) and hands the few it has no kernel for
to OCIO's CPU processor, with a warning. The output says what it now is (EXR colorInteropID, oiio:ColorSpace,
and chromaticities for a linear space with known primaries) in place of the input's tags; a file declaring
another space than --from is warned about in one line.
""",
)

DISPLAY = Step(
    "display",
    summary="Render an OpenColorIO display/view transform (or its inverse).",
    value=Param("display", "OCIO display.", metavar="FROM:DISPLAY:VIEW", complete=_config_names("displays")),
    params=(
        Param("from", "Scene colour space of the input.", complete=_config_names("spaces")),
        Param("view", "View of that display.", complete=_config_names("views")),
        Param("look", "Look(s) to apply, as OCIO: 'a, -b'.", complete=_config_names("looks")),
        Param("inverse", "From the display encoding back to --from.", kind=FLAG),
        ALPHA,
        CONFIG,
    ),
    build=_display,
    run_help="OCIO display/view (:look=L, :inverse=1, :alpha=1)",
    listing=_display_listing,
    listing_help="List the config's displays with their views (--display: that display's) and its looks.",
    examples="""\b
Examples:
  oxi display plate.exr review.png --from ACEScg --display "sRGB - Display" --view "ACES 2.0 - SDR 100 nits (Rec.709)"
  oxi display plate.exr review.jpg --from ACEScg --display "sRGB - Display" --view "Un-tone-mapped" --quality 90
  oxi display plate.exr review.exr --from ACEScg --display "sRGB - Display" --view "Un-tone-mapped" \\
      --look "ACES 1.3 Reference Gamut Compression"
  oxi display graphic.png linear.exr --from ACEScg --display "sRGB - Display" --view "Un-tone-mapped" --inverse
  oxi display 'plate.####.exr' -o review.mov --from ACEScg --display "Rec.1886 Rec.709 - Display" \\
      --view "ACES 2.0 - SDR 100 nits (Rec.709)" --burn "{shot}  {frame}" --burn "top-right:{timecode}"
  oxi display 'plate.####.exr' -o review.mp4 --fps 23.976 --quality 16 --from ACEScg --display "sRGB - Display" \\
      --view "ACES 2.0 - SDR 100 nits (Rec.709)"
  oxi display --list --display "sRGB - Display"
\b
A .mov or .mp4 output over a sequence is one review movie (ProRes 422 HQ in a .mov, H.264 in an .mp4; --codec),
tagged for the display (Rec.709, sRGB, Display P3, Rec.2100 PQ/HLG), its rate and timecode from the frames.
A PNG or JPEG output is a review frame: 8-bit R, G, B (--out-type uint16 for 16 bits; --alpha keeps alpha in a
PNG: a render's colour is premultiplied, PNG's alpha is not, so without it the frame is the picture over black).
An EXR keeps every channel and a TIFF R, G, B and alpha, in the input's pixel types. The output is tagged with
the display's colour space (colorInteropID, oiio:ColorSpace); a file declaring another space than --from is warned
about.
--inverse goes from the display's encoding back to --from. `oxi display --list` shows the displays, their views
and the looks; `oxi colorspace --list` the colour spaces.
""",
)
