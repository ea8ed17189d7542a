"""The colour-management commands: colorspace (conversions, --list) and display (display/view transforms)."""

from __future__ import annotations

from typing import Annotated

import typer

from oxi_cli.batch.options import BatchOptions
from oxi_cli.cli.common import chain_of, job_command, reporting, run_command

OptionalPaths = Annotated[
    list[str] | None,
    typer.Argument(help="IN OUT for one file; or inputs with -o. None with --list.", show_default=False,
                   metavar="PATHS"),
]
ConfigOpt = Annotated[
    str | None,
    typer.Option("--config", help="OCIO config: a file or ocio://... (default: $OCIO, else ocio://default).",
                 show_default=False),
]

COLORSPACE_EPILOG = """\b
Examples:
  oxi colorspace plate.exr plate_cct.exr --from ACEScg --to ACEScct
  oxi colorspace plate.exr thumb.png --from ACEScg --to "sRGB - Texture" --config ocio://studio-config-latest
  oxi colorspace --list --config ocio://studio-config-latest
  oxi colorspace --list --json | jq '.colorspaces[].name'
\b
Names, aliases and roles resolve as OpenColorIO resolves them. OCIO builds and optimises the processor; oxi
runs its ops on its own backends (fused with the other colour ops) and hands the few it has no kernel for
to OCIO's CPU processor, with a warning.
"""


@job_command
def colorspace(
    paths: OptionalPaths = None,
    source: Annotated[str | None, typer.Option("--from", help="Input colour space.", show_default=False)] = None,
    target: Annotated[str | None, typer.Option("--to", help="Output colour space.", show_default=False)] = None,
    config: ConfigOpt = None,
    list_all: Annotated[
        bool, typer.Option("--list", help="List the config's colour spaces, roles, displays, views and looks.")
    ] = False,
    *,
    opts: BatchOptions,
) -> None:
    """Convert between two colour spaces of an OpenColorIO config."""
    if list_all:
        with reporting(opts.debug):
            _print_listing(config, opts.json)
        return

    def build() -> object:
        from oxi_cli.errors import UsageError
        from oxi_cli.recipe import build_colorspace

        if source is None or target is None:
            raise UsageError("give --from and --to (colour space names, aliases or roles), or --list")
        return chain_of(build_colorspace(source, target, config))

    run_command(paths or [], opts, build)


DISPLAY_EPILOG = """\b
Examples:
  oxi display plate.exr review.png --from ACEScg --display "sRGB - Display" --view "ACES 2.0 - SDR 100 nits (Rec.709)"
  oxi display plate.exr review.exr --from ACEScg --display "sRGB - Display" --view "Un-tone-mapped" \\
      --look "ACES 1.3 Reference Gamut Compression"
  oxi display graphic.png linear.exr --from ACEScg --display "sRGB - Display" --view "Un-tone-mapped" --inverse
\b
--inverse goes from the display's encoding back to --from. `oxi colorspace --list` shows displays and views.
"""


@job_command
def display(
    paths: OptionalPaths = None,
    source: Annotated[str, typer.Option("--from", help="Scene colour space of the input.", show_default=False)] = "",
    display_name: Annotated[str, typer.Option("--display", help="OCIO display.", show_default=False)] = "",
    view: Annotated[str, typer.Option("--view", help="View of that display.", show_default=False)] = "",
    look: Annotated[str | None, typer.Option("--look", help="Look(s) to apply, as OCIO: 'a, -b'.")] = None,
    inverse: Annotated[bool, typer.Option("--inverse", help="From the display encoding back to --from.")] = False,
    config: ConfigOpt = None,
    *,
    opts: BatchOptions,
) -> None:
    """Render an OpenColorIO display/view transform (or its inverse)."""

    def build() -> object:
        from oxi_cli.errors import UsageError
        from oxi_cli.recipe import build_display

        if not (source and display_name and view):
            raise UsageError("give --from, --display and --view (`oxi colorspace --list` shows them)")
        return chain_of(build_display(source, display_name, view, look, inverse, config))

    run_command(paths or [], opts, build)


def _print_listing(config: str | None, as_json: bool) -> None:
    import json

    from oxi_cli.formats.ocio_config import listing, open_config

    info = listing(open_config(config))
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    typer.echo(f"config: {info['config']}")
    typer.echo("colour spaces:")
    for cs in info["colorspaces"]:
        aliases = f"  (aliases: {', '.join(cs['aliases'])})" if cs["aliases"] else ""
        typer.echo(f"  {cs['name']}  [{cs['reference']}]{aliases}")
    typer.echo("roles:")
    for role, space in info["roles"].items():
        typer.echo(f"  {role} = {space}")
    typer.echo("displays and views:")
    for disp, views in info["displays"].items():
        typer.echo(f"  {disp}")
        for v in views:
            typer.echo(f"    {v}")
    typer.echo("looks:" + ("" if info["looks"] else " none"))
    for lk in info["looks"]:
        typer.echo(f"  {lk}")
