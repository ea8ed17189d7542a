"""The Typer app: registers the commands and maps failures to exit codes."""

from __future__ import annotations

from typing import Annotated

import typer

from oxi_cli import __version__
from oxi_cli.cli import color, info, run, spatial, worker

MAIN_EPILOG = """\b
Every processing command takes IN OUT, or many inputs with -o:
  oxi cdl plate.exr graded.exr --cdl look.cc
  oxi cdl shots/ -o graded/ --cdl look.cc --jobs 2 --skip-existing --continue-on-error
  oxi run 'plate.####.exr' -o 'out/plate.####.exr' --frames 1001-1100 --cdl look.cc --lut3d show.cube
  oxi run --recipe dailies.toml shots/*.exr -o dailies/ --json > dailies.jsonl
Exit status: 0 ok, 1 a file failed, 2 bad usage or input, 130 interrupted.
"""

app = typer.Typer(
    name="oxi",
    help="Colour and image processing for production image files (EXR, PNG, TIFF, JPEG) on GPU or CPU.",
    epilog=MAIN_EPILOG,
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
app.command(
    epilog=run.RUN_EPILOG,
    no_args_is_help=True,
    options_metavar="IN... [OUT] [--cdl|--lut3d|--matrix|--resize|--blur VALUE]... [--recipe FILE] [OPTIONS]",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)(run.run)
app.command(epilog=info.INFO_EPILOG)(info.info)
app.command(epilog=worker.WORKER_EPILOG)(worker.worker)


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


PROCESSING_COMMANDS = ("cdl", "lut3d", "matrix", "resize", "blur", "run")


def run_app() -> None:
    """Console-script entry point."""
    import os
    import sys

    from oxi_cli.backends.select import open_early

    args = sys.argv[1:]
    # wgpu takes ~0.75 s to open a device: start now so it overlaps imports and decoding (only for real work).
    # A --cluster client computes nothing: its workers open their own devices.
    clustered = os.environ.get("OXI_CLUSTER") or any(a == "--cluster" or a.startswith("--cluster=") for a in args)
    if args and args[0] in PROCESSING_COMMANDS and not {"-h", "--help"} & set(args) and not clustered:
        open_early(args)
    try:
        app()
        code: object = 0
    except SystemExit as done:
        code = done.code
    _exit_now(code)


def _exit_now(code: object) -> None:
    """Leave without the interpreter's teardown (0.1-0.2 s with Numba and wgpu loaded): every output is
    already written and renamed into place by now, so only the standard streams need flushing."""
    import contextlib
    import os
    import sys

    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        # A closed pipe (oxi ... | head) must not turn success into a crash.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code or 0)


# pyproject's console script names `oxi_cli.cli.main:run`; `run` is also the `oxi run` command's module.
run = run_app  # noqa: F811
