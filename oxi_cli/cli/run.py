"""`oxi run`: a chain of operations, applied in the order written, from flags and/or TOML recipes."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from oxi_cli.batch.options import BatchOptions
from oxi_cli.cli.common import job_command, reporting, run_command

# Click does not keep the order of different options, so `run` leaves the op flags unparsed
# (ignore_unknown_options) and reads them here, in command-line order, with the inputs between them.
OP_FLAGS = {"--cdl": "cdl", "--lut3d": "lut3d", "--lut": "lut3d", "--matrix": "matrix", "--resize": "resize",
            "--blur": "blur", "--colorspace": "colorspace", "--display": "display"}
# OCIO config for the colour-space and display steps after it (else $OCIO, else OCIO's built-in default).
CONFIG_FLAG = "--config"
RECIPE_FLAG = "--recipe"
_FLAG = re.compile(r"(--[a-z0-9-]+)(?::(.*)|=(.*))?", re.DOTALL)

RUN_HELP = """Apply several operations in one pass, in the order given on the command line.

\b
Operations, each with one value (repeat and mix them freely):
  --cdl FILE             ASC CDL file (.cc/.ccc/.cdl), or values:
                         'slope=R,G,B offset=R,G,B power=R,G,B sat=S'
  --lut3d FILE           3D/1D LUT (.cube, .3dl, .spi3d, .spi1d, .clf, .ctf); or --lut
  --matrix NUMBERS       9, 12 or 16 numbers, row-major (as `oxi matrix`)
  --resize SIZE          1920x1080 (a box: fits inside, aspect kept, see fit=);
                         1920x0 / 0x1080 (the 0 side keeps the aspect); 50% (a
                         scale). A bare number is refused: write 50% or 1920x0
  --blur SIGMA           gaussian sigma in pixels; or radius=R
  --colorspace FROM:TO   OCIO colour-space conversion (names, aliases, roles)
  --display FROM:DISPLAY:VIEW   OCIO display/view (:look=L, :inverse=1)
  --config CONFIG        OCIO config (file or ocio://...) for the steps after it
  --recipe FILE.toml     a recipe's \\[\\[op]] steps, at this point of the chain;
                         its \\[output] and \\[run] settings apply unless given
\b
Parameters go after a colon, as in oiiotool:
  --cdl:style=asc:id=sh010 shots.ccc     --lut3d:interp=trilinear show.cube
  --resize:filter=box 1920x1080          --matrix:offset=0.01,0,0 "..."
  --resize:fit=stretch 1920x1080         --resize:force=1 1600%
With no operation it copies (converting with --out-type, --compression).

--resize:fit= for a box, as oiiotool --fit: fit (default; EXR: display window =
the box, data window = the picture centred in it; PNG/TIFF/JPEG: the box, bars
0), pad (the box, bars 0 in every channel), fill (cover the box, the overflow
cut from both sides), stretch (exactly the box, the aspect changes).
"""

RUN_EPILOG = """\b
Examples:
  oxi run plate.exr graded.exr --cdl look.cc --lut3d show.cube --resize 1920x1080
  oxi run shots/*.exr -o dailies/ --cdl:style=asc grade.cc --lut3d show.cube --resize:filter=box 50% -j 2
  oxi run --recipe dailies.toml 'plate.####.exr' -o 'out/plate.####.exr' --frames 1001-1100 --json
  oxi run renders/ -o half/ --recursive --out-type half --compression dwaa       # re-encode only
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
        paths, specs, settings = split_run_args(list(ctx.args))
        opts.apply_settings(settings)

    def build() -> Any:
        from oxi_cli.recipe import compile_chain

        return compile_chain(specs, force=force)

    run_command(paths, opts, build)


run.__doc__ = RUN_HELP


def split_run_args(tokens: list[str]) -> tuple[list[str], list[Any], dict[str, Any]]:
    """Inputs, op specs in order (recipes expanded in place) and the recipes' settings (later ones win).

    Flag forms: `--op VALUE`, `--op=VALUE`, `--op:key=v:key2=v2 VALUE`. The token after a flag is always
    its value, even when it starts with '-' (a matrix of negative numbers).
    """
    from oxi_cli.errors import UsageError
    from oxi_cli.recipe import OpSpec, load_recipe, pairs

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
            raise UsageError(f"unknown option {flag}; see `oxi run --help` for the operations")
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
            if OP_FLAGS[flag] in ("colorspace", "display") and config is not None:
                params.setdefault("config", config)
            specs.append(OpSpec(OP_FLAGS[flag], value, params, flag))
    return paths, specs, settings
