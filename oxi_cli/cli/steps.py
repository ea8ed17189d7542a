"""Each step's own command (`oxi cdl`, `oxi resize`, `oxi display`...), made from the parameters it declares."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from oxi_cli.batch.options import BatchOptions
from oxi_cli.cli.common import PathsArg, job_command, offered, reporting, run_command
from oxi_cli.ops.step import FLAG, Param, Step

OptionalPaths = Annotated[
    list[str] | None,
    typer.Argument(help="IN OUT for one file; or inputs with -o. None with --list.", show_default=False,
                   metavar="PATHS"),
]


def _option(param: Param, keys: dict[str, str]) -> Any:
    if param.kind == FLAG:
        return Annotated[bool, typer.Option(param.flag, help=param.help)]
    option = typer.Option(param.flag, help=param.help, show_default=param.default is not None, metavar=param.metavar,
                          autocompletion=_completion(param, keys))
    return Annotated[str | None, option]


def _completion(param: Param, keys: dict[str, str]) -> Callable[..., list[str]] | None:
    """Shell completion of `param`'s values, from the step's values typed before it (`--config`, `--display`)."""
    values = param.complete
    if values is None:
        return None

    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        given = {keys[k]: v for k, v in ctx.params.items() if k in keys and v is not None and v is not False}
        return offered(lambda: values(given), incomplete)

    return complete


def _default(param: Param) -> Any:
    return False if param.kind == FLAG else param.default


def step_command(step: Step) -> Callable[..., None]:
    """A Typer command for `step`: IN OUT (or -o) and the shared job options, plus one option per parameter."""
    params = [p for p in step.all_params if p.option != ""]
    keys = {f"p{i}": p.name for i, p in enumerate(params)}

    def command(paths: list[str] | None = None, *, opts: BatchOptions, **values: Any) -> None:
        if values.pop("list_all", False):
            with reporting(opts.debug):
                _print_listing(step, values, keys, opts.json)
            return

        def build() -> Any:
            from oxi_cli.recipe import command_chain

            return command_chain(step, {keys[k]: v for k, v in values.items()}, unpremult=bool(opts.unpremult))

        run_command(paths or [], opts, build)

    kw = inspect.Parameter.KEYWORD_ONLY
    signature = [inspect.Parameter("paths", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                   annotation=OptionalPaths if step.listing else PathsArg,
                                   default=None if step.listing else inspect.Parameter.empty)]
    signature += [inspect.Parameter(key, kw, annotation=_option(p, keys), default=_default(p))
                  for key, p in zip(keys, params, strict=True)]
    if step.listing is not None:
        listing = Annotated[bool, typer.Option("--list", help=step.listing_help + " With --json: one JSON document.")]
        signature.append(inspect.Parameter("list_all", kw, annotation=listing, default=False))
    signature.append(inspect.Parameter("opts", kw, annotation=BatchOptions))
    command.__signature__ = inspect.Signature(signature)  # type: ignore[attr-defined]
    command.__name__ = step.name
    command.__doc__ = step.summary
    return job_command(command)


def _print_listing(step: Step, values: dict[str, Any], keys: dict[str, str], as_json: bool) -> None:
    import json

    from oxi_cli.ops.step import StepArgs
    from oxi_cli.recipe import FILES

    given = {keys[k]: v for k, v in values.items() if v is not None and v is not False}
    assert step.listing is not None
    info, text = step.listing(StepArgs(step, given, FILES, command=True))
    typer.echo(json.dumps(info, indent=2) if as_json else text)
