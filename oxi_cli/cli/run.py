"""`oxi run`: a chain of operations, applied in the order written, from flags and/or TOML recipes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from oxi_cli.batch.options import BatchOptions
from oxi_cli.cli.common import job_command, reporting, run_command
from oxi_cli.recipe import STEPS

# Click does not keep the order of different options, so `run` leaves the op flags unparsed
# (ignore_unknown_options) and reads them here, in command-line order, with the inputs between them.
OP_FLAGS = {f"--{flag}": step.name for step in STEPS.values() for flag in (step.name, *step.aliases)}
# OCIO config for the steps after it that take one (else $OCIO, else OCIO's built-in default).
CONFIG_FLAG = "--config"
RECIPE_FLAG = "--recipe"
_FLAG = re.compile(r"(--[a-z0-9-]+)(?::(.*)|=(.*))?", re.DOTALL)


def _run_help() -> str:
    lines = ["Apply several operations in one pass, in the order given on the command line.", "", "\b",
             "Operations, each with one value (repeat and mix them freely):"]
    for step in STEPS.values():
        first, *more = step.run_help.split("\n")
        usage = f"  --{step.name} {step.value.metavar or step.value.name.upper()}"
        lines.append(f"{usage:<24} {first}" if len(usage) < 24 else f"{usage}   {first}")
        lines += [" " * 25 + line for line in more]
    lines += [
        "  --config CONFIG        OCIO config (file or ocio://...) for later steps",
        "  --recipe FILE.toml     a recipe's \\[\\[op]] steps, at this point of the chain;",
        "                         its \\[output] and \\[run] settings apply unless given",
        "\b",
        "Parameters go after a colon, as in oiiotool, with the names of each command's options",
        "(`oxi cdl --help`...):",
        "  --cdl:style=asc:id=sh010 shots.ccc     --lut3d:interp=trilinear show.cube",
        "  --resize:filter=box 1920x1080          --matrix:offset=0.01,0,0 \"...\"",
        "  --resize:fit=stretch 1920x1080         --resize:force=1 1600%",
        "With no operation it copies (converting with --out-type, --compression).",
    ]
    return "\n".join(lines) + "\n"


RUN_HELP = _run_help()

RUN_EPILOG = """\b
Examples:
  oxi run plate.exr graded.exr --cdl look.cc --lut3d show.cube --resize 1920x1080
  oxi run shots/*.exr -o dailies/ --cdl:style=asc grade.cc --lut3d show.cube --resize:filter=box 50% -j 2
  oxi run --recipe dailies.toml 'plate.####.exr' -o 'out/plate.####.exr' --frames 1001-1100 --json
  oxi run renders/ -o half/ --recursive --out-type half --compression dwaa       # re-encode only
  oxi run 'plate.####.exr' -o review.mov --cdl grade.cc --display ACEScg:"sRGB - Display":"Un-tone-mapped" \\
      --codec prores_hq --burn "{shot}  {frame}"      # one review movie (.mov: ProRes, .mp4: H.264)
  oxi run cg.exr out.exr --cdl look.cc --resize 50% --lut3d show.cube --unpremult
      (a premultiplied render: each colour run graded unpremultiplied, the resize on premultiplied pixels)
"""


@job_command
def run(
    ctx: typer.Context,
    force: Annotated[
        bool, typer.Option("--force", help="Let a resize go beyond 8x or 32768 pixels a side.", show_default=False)
    ] = False,
    *,
    opts: BatchOptions,
) -> None:
    with reporting(opts.debug):
        own = [name for param in ctx.command.params for name in param.opts if name.startswith("--")]
        paths, specs, settings = split_run_args(list(ctx.args), own)
        opts.apply_settings(settings)

    def build() -> Any:
        from oxi_cli.recipe import compile_chain

        return compile_chain(specs, force=force, unpremult=bool(opts.unpremult))

    run_command(paths, opts, build)


run.__doc__ = RUN_HELP


def split_run_args(tokens: list[str], options: Sequence[str] = ()) -> tuple[list[str], list[Any], dict[str, Any]]:
    """Inputs, op specs in order (recipes expanded in place) and the recipes' settings (later ones win).

    Flag forms: `--op VALUE`, `--op=VALUE`, `--op:key=v:key2=v2 VALUE`. The token after a flag is always
    its value, even when it starts with '-' (a matrix of negative numbers). `options` are the command's own
    (--json...), for the "did you mean" of an unknown flag.
    """
    from oxi_cli.errors import UsageError
    from oxi_cli.ops.values import did_you_mean, pairs
    from oxi_cli.recipe import OpSpec, load_recipe

    paths: list[str] = []
    specs: list[OpSpec] = []
    settings: dict[str, Any] = {}
    config: str | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if not tok.startswith("-") or tok == "-":
            paths.append(tok)
            continue
        m = _FLAG.fullmatch(tok)
        flag = m.group(1) if m else tok
        if flag == CONFIG_FLAG:
            if m is not None and m.group(3) is not None:
                config = m.group(3)
            elif i < len(tokens):
                config, i = tokens[i], i + 1
            else:
                raise UsageError(f"{CONFIG_FLAG} needs a config file or ocio:// URI")
            continue
        if flag != RECIPE_FLAG and flag not in OP_FLAGS:
            hint = did_you_mean(flag, [*OP_FLAGS, CONFIG_FLAG, RECIPE_FLAG, *options])
            raise UsageError(f"unknown option {flag}{hint} (see `oxi run --help` for the operations)")
        assert m is not None
        modifiers, inline = m.group(2), m.group(3)
        if inline is None:
            if i >= len(tokens):
                raise UsageError(f"{flag} needs a value; see `oxi run --help`")
            value = tokens[i]
            i += 1
        else:
            value = inline
        if flag == RECIPE_FLAG:
            if modifiers:
                raise UsageError(f"{RECIPE_FLAG} takes no parameters, got {tok}")
            recipe = load_recipe(value)
            specs.extend(recipe.specs)
            settings.update(recipe.settings)
        else:
            params = pairs(modifiers, ":") if modifiers else {}
            step = STEPS[OP_FLAGS[flag]]
            if config is not None and any(p.name == "config" for p in step.params):
                params.setdefault("config", config)
            specs.append(OpSpec(OP_FLAGS[flag], value, params, flag))
    return paths, specs, settings
