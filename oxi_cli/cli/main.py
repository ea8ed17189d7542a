"""The Typer app: registers the commands and maps failures to exit codes."""

from __future__ import annotations

from typing import Annotated

import typer

from oxi_cli import __version__
from oxi_cli.cli import color, spatial

app = typer.Typer(
    name="oxi",
    help="Colour and image processing for production image files (EXR, PNG, TIFF, JPEG) on GPU or CPU.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"oxi {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """oxi: same answers as OpenColorIO and oiiotool, faster, with bounded memory."""


app.command(epilog=color.CDL_EPILOG)(color.cdl)
app.command(epilog=color.LUT_EPILOG)(color.lut3d)
app.command(epilog=color.MATRIX_EPILOG)(color.matrix)
app.command(epilog=spatial.RESIZE_EPILOG)(spatial.resize)
app.command(epilog=spatial.BLUR_EPILOG)(spatial.blur)


PROBE_EPILOG = """\b
Examples:
  oxi probe
  oxi probe --json | jq '.auto'
"""


@app.command(epilog=PROBE_EPILOG)
def probe(json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False) -> None:
    """List the compute devices oxi can use and which one `--backend auto` picks."""
    from oxi_cli.cli.common import reporting
    from oxi_cli.cli.probe import probe as run_probe

    with reporting(False):
        run_probe(json_output)


def run() -> None:
    """Console-script entry point."""
    app()
