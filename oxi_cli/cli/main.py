"""The Typer app: registers the commands and maps failures to exit codes."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from oxi_cli import __version__
from oxi_cli.cli import info, run, server, worker
from oxi_cli.cli.steps import step_command
from oxi_cli.recipe import STEPS


def _fitted(command: Any) -> Any:
    """A copy of `command` whose help and epilog fit this terminal (oxi_cli/cli/helpfit.py)."""
    import copy

    from rich.console import Console
    from typer import rich_utils

    from oxi_cli.cli.helpfit import fit_help

    width = rich_utils.MAX_WIDTH or Console().width
    fitted = copy.copy(command)
    fitted.help, fitted.epilog = fit_help(command.help, width), fit_help(command.epilog, width)
    return fitted


class OxiCommand(TyperCommand):
    """Usage lines as people write them (`oxi cdl [OPTIONS] IN... [OUT]`): Typer wraps required arguments in
    braces (`{PATHS}`), which reads as shell or set syntax. Help fitted to the terminal's width."""

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        TyperCommand.format_help(_fitted(self), ctx, formatter)


class OxiGroup(TyperGroup):
    """The `oxi` group, its help fitted to the terminal's width as the commands' is."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        TyperGroup.format_help(_fitted(self), ctx, formatter)


MAIN_EPILOG = """\b
Every processing command takes IN OUT, or many inputs with -o:
  oxi cdl plate.exr graded.exr --cdl look.cc
  oxi cdl shots/ -o graded/ --cdl look.cc --jobs 2 --skip-existing --continue-on-error
  oxi run 'plate.####.exr' -o 'out/plate.####.exr' --frames 1001-1100 --cdl look.cc --lut3d show.cube
  oxi run --recipe dailies.toml shots/*.exr -o dailies/ --json > dailies.jsonl
  oxi display 'plate.####.exr' -o review.mov --from ACEScg --display "sRGB - Display" --view "Un-tone-mapped"
Exit status: 0 ok, 1 a file failed, 2 bad usage or input, 130 interrupted.
"""

app = typer.Typer(
    name="oxi",
    cls=OxiGroup,
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
        from oxi_cli.service.paths import installed_version

        typer.echo(f"oxi {installed_version() or __version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """oxi: same answers as OpenColorIO and oiiotool, faster, with bounded memory."""


for step in STEPS.values():
    app.command(step.name, cls=OxiCommand, epilog=step.examples)(step_command(step))
app.command(
    cls=OxiCommand,
    epilog=run.RUN_EPILOG,
    no_args_is_help=True,
    options_metavar=f"IN... [OUT] [--{'|--'.join(STEPS)} VALUE]... [--recipe FILE] [OPTIONS]",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)(run.run)
app.command(cls=OxiCommand, epilog=info.INFO_EPILOG)(info.info)
app.command(cls=OxiCommand, epilog=worker.WORKER_EPILOG)(worker.worker)
app.command(cls=OxiCommand, epilog=server.SERVER_EPILOG)(server.server)


PROBE_EPILOG = """\b
Examples:
  oxi probe
  oxi probe --json | jq '.auto'
  oxi probe --calibrate
  oxi probe --compile
  OXI_KERNEL_CACHE=/opt/oxi/kernels oxi probe --compile --json | jq '.compile'

The CPU backend compiles its kernels (Numba) once and caches them per user
($XDG_CACHE_HOME/oxi/kernels). A job never waits for that: while a kernel is
not compiled, the op runs another way (OpenColorIO's CPU processor for colour
ops, NumPy for resize, blur and place) and one background process compiles
it for the next job. --compile compiles every kernel at once, on every core.
OXI_KERNEL_CACHE=FOLDER names a cache to build once (a farm or container
image) and share: it is used if it is yours, or read-only and complete; one
built for another oxi, Numba, llvmlite, Python or CPU, or that other users
may write into, is ignored. OXI_WAIT_FOR_KERNELS=1: compile and wait instead.
"""


@app.command(cls=OxiCommand, epilog=PROBE_EPILOG)
def probe(
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    calibrate: Annotated[bool, typer.Option(
        "--calibrate", help="Measure this host's CPU and GPU rates first (a few seconds) and cache them for auto."
    )] = False,
    compile_kernels: Annotated[bool, typer.Option(
        "--compile", help="Compile every CPU kernel into the kernel cache first, on every core (under a minute)."
    )] = False,
) -> None:
    """List the compute devices oxi can use, the rates `--backend auto` weighs them by, which it picks, and the CPU
    kernel cache."""
    from oxi_cli.cli.common import reporting
    from oxi_cli.cli.probe import probe as run_probe

    with reporting(False):
        run_probe(json_output, calibrate, compile_kernels)


def run_command(prog_name: str | None = None) -> int:
    """Run the command sys.argv holds and return its exit status: the `oxi` command's whole job, shared by this
    process's entry point and the service's workers (service/worker.py), which run it for a client and name the
    program as the client's process would (`prog_name`; None: Click's guess from this process)."""
    import signal

    from oxi_cli.cli.failures import exit_status, handle_ending_signals
    from oxi_cli.cli.stdio import guard_closed_streams

    _quiet_warnings()
    # Start-up is over (oxi_cli/__init__.py guarded it): from here Ctrl-C is a KeyboardInterrupt, so a batch
    # can abandon its files and leave no partial output.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    handle_ending_signals()
    guard_closed_streams()
    return exit_status(_invoke(prog_name))


def _invoke(prog_name: str | None = None) -> int:
    """Run the app; map whatever escapes it (Click's usage errors included) to one line and an exit code."""
    import errno
    import sys

    import typer

    from oxi_cli.cli.failures import (
        EXIT_INTERRUPTED,
        click_errors,
        ended_by_a_command,
        exit_code_for,
        message_for,
        print_error,
        status_if_nothing_interrupted,
    )
    from oxi_cli.cli.stdio import StreamClosed
    from oxi_cli.errors import note_settled

    click = click_errors()

    ended_by_a_command()  # forget an earlier command's (tests run several in one process)
    note_settled(None)
    try:
        result = click_command()(standalone_mode=False, prog_name=prog_name)
        code = result if isinstance(result, int) else 0
        if not ended_by_a_command() and code == EXIT_INTERRUPTED:  # Typer's own, silent answer to a Ctrl-C
            if (settled := status_if_nothing_interrupted()) is not None:
                return settled
            print_error(message_for(KeyboardInterrupt()))
        return code
    except SystemExit as e:
        # Typer answers EPIPE on stdout by wrapping the streams in Click's PacifyFlushWrapper and exiting 1.
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":
            return closed_stdout()
        return e.code if isinstance(e.code, int) else exit_code_for(e)
    except click.NoArgsIsHelpError as e:
        e.show()  # `oxi cdl` alone: the help, as before
        return e.exit_code
    except OSError as e:  # BrokenPipeError included
        if e.errno == errno.EPIPE:
            return closed_stdout()
        print_error(message_for(e))
        return exit_code_for(e)
    except StreamClosed as e:  # printing a command's result to a stdout the caller closed
        print_error(message_for(e))
        return exit_code_for(e)
    except (click.ClickException, typer.Abort, KeyboardInterrupt) as e:
        if (settled := status_if_nothing_interrupted(e)) is not None:
            return settled
        print_error(message_for(e))
        return exit_code_for(e)


def click_command() -> Any:
    """The Click command Typer builds from `app`: 25-70 ms of work, done once per process (a service worker
    reuses it for every job; a worker forked after the service preloaded it starts with it). Called as Typer's
    own `app()` calls it: its exception hook (plain tracebacks: pretty exceptions are off), then the command."""
    import typer.main

    if sys.excepthook is not typer.main.except_hook:
        sys.excepthook = typer.main.except_hook
    if not _COMMAND:
        _COMMAND.append(typer.main.get_command(app))
        from oxi_cli.cli.completion import register

        register()  # after get_command: Typer registers its own completion classes there
    return _COMMAND[0]


_COMMAND: list[Any] = []


def closed_stdout() -> int:
    """The reader of our stdout went away (`oxi info ... | head`): end quietly, as `cat` does."""
    import contextlib
    import os

    from oxi_cli.cli.failures import EXIT_CLOSED_PIPE

    # Later flushes of what is still buffered would fail again: send them nowhere.
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    return EXIT_CLOSED_PIPE


def _quiet_warnings() -> None:
    """Python warnings (numpy's RuntimeWarning...) as one `oxi: warning:` line each, once, never raw."""
    import warnings

    from oxi_cli.cli.failures import print_warning

    seen: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
        text = str(message)
        if text not in seen:
            seen.add(text)
            print_warning(text)

    warnings.showwarning = show  # type: ignore[assignment]


def _exit_now(code: object) -> None:
    """Leave without the interpreter's teardown (0.1-0.2 s with Numba and wgpu loaded): every output is
    already written and renamed into place by now, so only the standard streams need flushing."""
    import contextlib
    import os
    import signal
    import sys

    from oxi_cli import leaving
    from oxi_cli.cli.failures import ENDING_SIGNALS, ending_signal

    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    ended_by = ending_signal(code or 0)

    def interrupted(signum: int, frame: object) -> None:
        os._exit(code or 0)

    # The work is done and reported: a Ctrl-C now (a flush blocked on a full pipe) ends the process with the
    # work's status, not 130 (nothing was interrupted).
    for name in ("SIGINT", *ENDING_SIGNALS):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), interrupted)
    if ended_by is None:
        leaving.run()  # e.g. the background compile of kernels this job found cold (os._exit runs no atexit handler)
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        code = code or closed_stdout()
    except (OSError, ValueError):
        pass
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.flush()
    if ended_by is not None:  # end by the signal itself, as a process that had no handler for it
        signal.signal(ended_by, signal.SIG_DFL)
        os.kill(os.getpid(), ended_by)
    os._exit(code or 0)

