"""Exit codes by cause, in one place: every failure becomes one stderr line and one exit code."""

from __future__ import annotations

import sys
from typing import Any

from oxi_cli.batch.interrupts import SIGNALLED as _signalled
from oxi_cli.errors import OxiError, caused_by_interrupt

# The rules docs/GUIDE.md's "Exit codes" section states. Wrong input or arguments are the user's to fix (2); the
# machine failing us (disk full, device lost, out of memory, a bug) is 1; Ctrl-C is 130; a reader that
# closed our stdout (`oxi info ... | head`) ends us quietly, as it ends `cat`.
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `cat` in the same place
MAX_LINE = 400  # an error quoting a huge value (--name '{stem:>9999999}') must stay readable


# Exit codes commands ended with through finished(): Typer answers a Ctrl-C in its own code (parsing the
# arguments, say) with a silent Exit(130) too, and the entry point must tell that one apart (and say
# "interrupted") from a command's, whose line is already printed.
_ended: list[int] = []


def finished(code: int) -> Exception:
    """Typer's Exit for a command ending with `code`, its line printed; noted for the entry point."""
    import typer

    _ended.append(code)
    return typer.Exit(code)


def ended_by_a_command() -> bool:
    """Whether the last exit code came from finished() (cleared for the next command)."""
    said = bool(_ended)
    _ended.clear()
    return said


# SIGTERM and SIGHUP end a command as Ctrl-C does (files abandoned, temporaries removed); the process then ends by
# that signal, as a process without a handler would (a shell says 143, 129): ending_signal() tells the entry point.
ENDING_SIGNALS = ("SIGTERM", "SIGHUP")


def handle_ending_signals() -> None:
    """From here (main thread) SIGTERM and SIGHUP interrupt the command like Ctrl-C, and are remembered."""
    import signal

    from oxi_cli.batch.interrupts import interrupt_as_ctrl_c

    _signalled.clear()
    for name in ENDING_SIGNALS:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), interrupt_as_ctrl_c)


def ending_signal(code: int) -> int | None:
    """The signal that ended the command whose exit status is `code` (128 + its number), or None."""
    for signum in _signalled[:1]:
        if code == 128 + signum:
            return signum
    return None


def exit_status(code: int) -> int:
    """A command's status as its process reports it: 128 + the signal for one that SIGTERM or SIGHUP ended
    (whatever failed after it: a hung-up terminal fails the progress bar's last write), unless it ended well."""
    return 128 + _signalled[0] if _signalled and code != EXIT_OK else code


def status_if_nothing_interrupted(error: BaseException | None = None) -> int | None:
    """For a Ctrl-C (`error`, or Typer's silent 130 when None) that came once every file had ended: the work's
    own status, to exit with and say nothing more; None for a real interruption or any other error."""
    from oxi_cli.errors import settled_status

    return settled_status() if error is None or isinstance(error, KeyboardInterrupt) else None


def interrupted(error: BaseException) -> bool:
    """A Ctrl-C, an error one caused, or Typer's Abort."""
    return caused_by_interrupt(error) or isinstance(error, _abort())


def click_errors() -> Any:
    """The exceptions module of the Click that Typer runs on (Typer >= 0.25 vendors its own copy)."""
    try:
        from typer._click import exceptions
    except ImportError:  # an older Typer on the real Click
        from click import exceptions
    return exceptions


def _abort() -> type:
    import typer

    return typer.Abort


def exit_code_for(error: BaseException) -> int:
    """The exit code for any exception that reaches the command line."""
    click = click_errors()

    if isinstance(error, OxiError):
        return error.exit_code
    if isinstance(error, click.ClickException):
        # Click's own usage errors (a bad option value, an unknown option) are the user's input: 2.
        return EXIT_USAGE if isinstance(error, click.UsageError) else error.exit_code
    if interrupted(error):
        return EXIT_INTERRUPTED
    if isinstance(error, BrokenPipeError):
        return EXIT_CLOSED_PIPE
    return EXIT_FAILED


def message_for(error: BaseException) -> str:
    """One line saying what went wrong, in oxi's words."""
    click = click_errors()

    if isinstance(error, OxiError):
        return str(error)
    if isinstance(error, click.ClickException):
        return click_message(error)
    if isinstance(error, MemoryError):
        return "out of memory; try a smaller --threads or --jobs, or a machine with more RAM"
    if interrupted(error):
        return "interrupted; no partial output was left behind"
    return f"{type(error).__name__}: {error} (rerun with --debug for the traceback)"


def click_message(error: Any) -> str:
    """Click's usage errors as `--sat: 'abc' is not a valid float (see oxi cdl --help)`: one line, no box."""
    click = click_errors()

    text = error.format_message()
    hint = ""
    if isinstance(error, click.NoSuchOption) and error.possibilities:
        text = f"no such option: {error.option_name}{_closest_option(error.option_name, error.possibilities)}"
    if isinstance(error, click.BadParameter) and not isinstance(error, click.MissingParameter):
        text = error.message
        param = error.param
        opts = [o for o in getattr(param, "opts", []) if o.startswith("--")] if param is not None else []
        hint = opts[0] if opts else str(error.param_hint or getattr(param, "name", "") or "").strip("'\"")
    text = text.rstrip(".")
    if text[:1].isupper() and text[1:2].islower():
        text = text[0].lower() + text[1:]
    where = getattr(getattr(error, "ctx", None), "command_path", None)
    tail = f" (see `{where} --help`)" if where else ""
    return f"{hint}: {text}{tail}" if hint else f"{text}{tail}"


def _closest_option(typed: str, possibilities: Any) -> str:
    """'; did you mean --slope?': the one closest flag (click lists its candidates alphabetically, so `--slop`
    offered --help first), or the two closest when they tie."""
    import difflib

    def score(flag: str) -> float:
        return difflib.SequenceMatcher(None, typed, flag).ratio() + (1.0 if flag.startswith(typed) else 0.0)

    ranked = sorted(set(possibilities), key=lambda flag: (-score(flag), flag))
    best = [flag for flag in ranked[:2] if score(flag) == score(ranked[0])]
    return f"; did you mean {' or '.join(best)}?"


def one_line(message: str) -> str:
    """Newlines folded and length capped, so an error is always exactly one readable line."""
    flat = " ".join(message.split())
    return flat if len(flat) <= MAX_LINE else flat[: MAX_LINE - 1] + "…"


def print_error(message: str) -> None:
    _say(f"oxi: error: {one_line(message)}")


def print_warning(message: str) -> None:
    _say(f"oxi: warning: {one_line(message)}")


def _say(line: str) -> None:
    """One line on stderr; a stderr that cannot take it (the terminal hung up: EIO) loses it, as it would any
    program's, and changes nothing else (the exit status, a signal's end)."""
    import contextlib

    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)
