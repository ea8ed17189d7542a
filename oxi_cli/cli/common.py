"""Options every processing command shares, error reporting, and handing a chain to the batch runner."""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from oxi_cli.batch.options import BatchOptions
from oxi_cli.errors import OxiError

BATCH = "Inputs, outputs and batches"
COMPUTE = "Compute and output format"
MESSAGES = "Messages and reports"
PARTS = "Parts, views and layers"
MOVIES = "Movies (-o review.mov)"
LAYERS_HELP = (
    "Layers colour ops grade, besides the picture's own R, G, B and every view's (right.R ...): "
    "layer names, 'all' (every layer with R, G and B), '-NAME' to leave one out; e.g. --layers diffuse,specular "
    "or --layers=all,-right. Other channels pass through untouched."
)

def offered(values: Callable[[], Sequence[str]], incomplete: str) -> list[str]:
    """What shell completion offers: the values starting with what was typed. Completion must never print a
    traceback into the user's shell, so a config that cannot be read offers nothing."""
    try:
        known = list(values())
    except Exception:
        return []
    return [v for v in dict.fromkeys(known) if v.startswith(incomplete)]


def _backends() -> Sequence[str]:
    from oxi_cli.backends.select import kinds

    return kinds()


def _strategies() -> Sequence[str]:
    from oxi_cli.plan import STRATEGIES

    return STRATEGIES


def _out_types() -> Sequence[str]:
    from oxi_cli.execute import OUT_TYPES

    return OUT_TYPES


def _compressions() -> Sequence[str]:
    from oxi_cli.io.exr import COMPRESSIONS
    from oxi_cli.io.raster import TIFF_COMPRESSIONS

    return [*COMPRESSIONS, *TIFF_COMPRESSIONS]


def _codecs() -> Sequence[str]:
    from oxi_cli.io.movie import CODECS

    return list(CODECS)


def _completing(values: Callable[[], Sequence[str]]) -> Callable[[str], list[str]]:
    """A Typer `autocompletion` offering `values()` (imported only when completing: --help loads no numpy)."""

    def complete(incomplete: str) -> list[str]:
        return offered(values, incomplete)

    return complete


PathsArg = Annotated[
    list[str],
    typer.Argument(
        help="IN OUT for one file; or inputs (files, folders, globs, sequences like plate.####.exr) with -o.",
        show_default=False,
        metavar="IN... [OUT]",
    ),
]
OutputOpt = Annotated[
    str | None,
    typer.Option(
        "-o",
        "--output",
        help="Output file (one input), folder (created if missing) or sequence pattern (out.####.exr).",
        rich_help_panel=BATCH,
        show_default=False,
    ),
]
NameOpt = Annotated[
    str | None,
    typer.Option(
        "--name",
        help="Output file names in a folder, from each input's: {name} plate.1001.exr; {stem} plate.1001 (the frame "
        "number stays); {ext} .exr; {frame} 1001 ({frame:04d} pads it); {base} plate (the stem without its frame "
        "number); {parent} the input's folder. '{stem}_graded{ext}' gives plate.1001_graded.exr; for a sequence, "
        "'{base}_graded.{frame:04d}{ext}' gives plate_graded.1001.exr.",
        rich_help_panel=BATCH,
        show_default=False,
    ),
]
FramesOpt = Annotated[
    str | None,
    typer.Option(
        "--frames",
        help="Frames of a sequence input: 1001-1100, 1001-1100x2, 1001,1005,1010-1020. Default: all on disk.",
        rich_help_panel=BATCH,
        show_default=False,
    ),
]
RecursiveOpt = Annotated[
    bool, typer.Option("--recursive", "-r", help="Look in sub-folders of folder inputs.", rich_help_panel=BATCH)
]
JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        help="Files in flight at once, admitted against --memory-budget. Default 1.",
        rich_help_panel=BATCH,
        show_default=False,
    ),
]
# Help texts are rich markup: a literal [ is written \\[ (else `[cluster]` is read as a style and vanishes).
ClusterOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        envvar="OXI_CLUSTER",
        help="Run the files as tasks on a Dask cluster: tcp://host:8786 (workers from `oxi worker`), or local / "
        "local:N worker processes here (env OXI_CLUSTER). Needs oxi\\[cluster].",
        rich_help_panel=BATCH,
        show_default=False,
    ),
]
BudgetOpt = Annotated[
    str | None,
    typer.Option(
        "--memory-budget",
        help="Memory the files in flight may use together, e.g. 8G (env OXI_MEMORY_BUDGET); --memory-limit "
        "is the same option. Default: half the memory available.",
        rich_help_panel=BATCH,
        show_default=False,
    ),
]
# The same option under its other name, kept out of --help so the table shows one name per row.
BudgetAliasOpt = Annotated[str | None, typer.Option("--memory-limit", hidden=True, show_default=False)]
VramOpt = Annotated[
    str | None,
    typer.Option(
        "--vram-limit",
        help="GPU memory one file may use, e.g. 4G; larger images are processed in tiles. Default: the device's.",
        rich_help_panel=BATCH,
        show_default=False,
    ),
]
StrategyOpt = Annotated[
    str | None,
    typer.Option(
        "--strategy",
        help="auto (default), single, tiled or streaming; forcing one that cannot fit is an error.",
        autocompletion=_completing(_strategies),
        rich_help_panel=BATCH,
        show_default=False,
    ),
]
PlanOpt = Annotated[
    bool,
    typer.Option(
        "--plan",
        help="Print the plan (strategy, tiles or bands, memory per device, why) and process nothing.",
        rich_help_panel=BATCH,
    ),
]
SkipOpt = Annotated[
    bool,
    typer.Option("--skip-existing", help="Skip inputs whose output exists (resume a batch).", rich_help_panel=BATCH),
]
OverwriteOpt = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Replace outputs that exist already (env OXI_OVERWRITE=1). Without it, or --skip-existing, an existing "
        "output is refused before any work: a forgotten -o must not destroy a frame.",
        rich_help_panel=BATCH,
    ),
]
ContinueOpt = Annotated[
    bool,
    typer.Option(
        "--continue-on-error",
        help="Keep going after a failed file; summary at the end, exit 1 if any failed.",
        rich_help_panel=BATCH,
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON record per file on stdout.", rich_help_panel=MESSAGES)
]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print nothing on success (errors only).", rich_help_panel=MESSAGES)
]
VerboseOpt = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Also print, for each file done, its size in and out, the ops, the backend "
                 "and device, the strategy, the read/compute/write seconds and the peak memory.",
                 rich_help_panel=MESSAGES),
]
BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="auto, cpu or gpu (env OXI_BACKEND). auto picks the best device found. The CPU's kernels compile once "
        "per machine, in the background: until then jobs run without waiting, on OpenColorIO and NumPy (`oxi probe "
        "--help`).",
        autocompletion=_completing(_backends),
        rich_help_panel=COMPUTE,
        show_default=False,
    ),
]
DeviceOpt = Annotated[
    int | None,
    typer.Option("--device", help="GPU adapter index from `oxi probe`.", rich_help_panel=COMPUTE, show_default=False),
]
ThreadsOpt = Annotated[
    int | None,
    typer.Option(
        "--threads", help="CPU threads for compute and EXR I/O: 1 to 4 per CPU core.", rich_help_panel=COMPUTE,
        show_default=False
    ),
]
OutTypeOpt = Annotated[
    str | None,
    typer.Option(
        "--out-type",
        help="Output pixel type: same (default: the input's, or the nearest the format holds; 8-bit for a review "
        "frame, a display-referred PNG or JPEG), half, float, uint8 or uint16.",
        autocompletion=_completing(_out_types),
        rich_help_panel=COMPUTE,
        show_default=False,
    ),
]
CompressionOpt = Annotated[
    str | None,
    typer.Option(
        "--compression",
        help="EXR codec (zip, piz, dwaa, dwab, none...), a DWA level as oiiotool writes it (dwab:45; OpenEXR's "
        "default 45, higher is smaller and lossier), or a TIFF codec (deflate, lzw, none...); default: the input's.",
        autocompletion=_completing(_compressions),
        rich_help_panel=COMPUTE,
        show_default=False,
    ),
]
QualityOpt = Annotated[
    int | None,
    typer.Option(
        "--quality",
        help="JPEG quality, 1-100 (default 95); for an h264/h265 movie, the constant rate factor, 0-51 (lower is "
        "better; default 18 for h264, 20 for h265).",
        rich_help_panel=COMPUTE,
        show_default=False,
    ),
]
CodecOpt = Annotated[
    str | None,
    typer.Option(
        "--codec",
        help="A movie's codec: prores_hq (ProRes 422 HQ, the .mov default), prores, prores_lt, prores_proxy, "
        "prores_4444 (keeps alpha), prores_4444xq, h264 (the .mp4 default), h265, dnxhr_hq, dnxhr_sq, dnxhr_lb, "
        "dnxhr_hqx, dnxhr_444. E.g. oxi display 'plate.####.exr' -o review.mp4 --codec h265 --from ACEScg "
        "--display 'Rec.1886 Rec.709 - Display' --view 'ACES 2.0 - SDR 100 nits (Rec.709)'",
        autocompletion=_completing(_codecs),
        rich_help_panel=MOVIES,
        show_default=False,
    ),
]
FpsOpt = Annotated[
    str | None,
    typer.Option(
        "--fps",
        help="A movie's frame rate: 24, 23.976 (24000/1001), 25, 29.97, 30, 48, 50, 59.94, 60. Default: the "
        "first frame's framesPerSecond attribute, else 24. The start timecode is the first frame's timeCode "
        "attribute, else its frame number counted at this rate (frame 1001 at 24 fps: 00:00:41:17).",
        rich_help_panel=MOVIES,
        show_default=False,
    ),
]
BurnOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--burn",
        help="Text burnt into each movie frame, repeatable: fields {shot} {frame} {timecode} {name} {stem} {fps} "
        "{codec}, after an optional place (top-left, top, top-right, bottom-left (default), bottom, "
        "bottom-right:). E.g. --burn '{shot}  {frame}' --burn 'top-right:{timecode}'",
        rich_help_panel=MOVIES,
        show_default=False,
    ),
]
InPlaceOpt = Annotated[
    bool,
    typer.Option("--in-place", help="Allow an output to replace its input (two frames of one sequence without -o: "
                 "each is graded onto itself).", rich_help_panel=COMPUTE),
]
PartOpt = Annotated[
    str | None,
    typer.Option(
        "--part",
        help="Process one part of a multi-part EXR (its name or 0-based index, as `oxi info` lists them) and write "
        "it alone, as oiiotool's --subimage. Default: every part.",
        rich_help_panel=PARTS,
        show_default=False,
    ),
]
LayersOpt = Annotated[
    str | None,
    typer.Option("--layers", help=LAYERS_HELP, rich_help_panel=PARTS, show_default=False),
]
MipLevelOpt = Annotated[
    int | None,
    typer.Option(
        "--mip-level",
        help="0: process a mip- or rip-mapped texture's top level alone into a one-level file (without it such "
        "files are refused: the smaller levels would be lost). EXR textures and .tx (maketx's tiled TIFFs) alike, "
        "e.g. oxi cdl wood.tx graded.tx --slope 1.1 --mip-level 0, then maketx graded.tx -o graded.tx.",
        rich_help_panel=PARTS,
        show_default=False,
    ),
]
UnpremultOpt = Annotated[
    bool | None,
    typer.Option(
        "--unpremult/--no-unpremult",
        help="Grade premultiplied pixels (CG renders) unpremultiplied: R, G, B divided by alpha before each run of "
        "colour ops, multiplied back after it (each layer and view by its own alpha; alpha left as it is; a pixel "
        "whose alpha is 0 is graded undivided, so a glow over nothing is converted too), as oiiotool's "
        "unpremult=1. Default off: the stored values "
        "are graded, as OCIO, oiiotool and Nuke's OCIO nodes do; a recipe's \\[run] unpremult = true turns it on. "
        "Use it on CG renders with alpha for grades with offsets, powers, LUTs or saturation (a pure slope or "
        "matrix gives the same either way). Resize and blur need none. "
        "E.g. oxi cdl cg.exr out.exr --slope 1.2,1,0.8 --offset 0.02 --unpremult",
        rich_help_panel=PARTS,
        show_default=False,
    ),
]
DebugOpt = Annotated[
    bool, typer.Option("--debug", help="Show Python tracebacks on errors.", rich_help_panel=MESSAGES)
]

# BatchOptions field -> its option, in the order --help lists them.
JOB_OPTIONS: dict[str, Any] = {
    "output": OutputOpt,
    "name": NameOpt,
    "frames": FramesOpt,
    "recursive": RecursiveOpt,
    "jobs": JobsOpt,
    "cluster": ClusterOpt,
    "memory_budget": BudgetOpt,
    "vram_limit": VramOpt,
    "strategy": StrategyOpt,
    "plan_only": PlanOpt,
    "skip_existing": SkipOpt,
    "overwrite": OverwriteOpt,
    "continue_on_error": ContinueOpt,
    "json": JsonOpt,
    "quiet": QuietOpt,
    "verbose": VerboseOpt,
    "backend": BackendOpt,
    "device": DeviceOpt,
    "threads": ThreadsOpt,
    "out_type": OutTypeOpt,
    "compression": CompressionOpt,
    "quality": QualityOpt,
    "codec": CodecOpt,
    "fps": FpsOpt,
    "burn": BurnOpt,
    "in_place": InPlaceOpt,
    "part": PartOpt,
    "layers": LayersOpt,
    "mip_level": MipLevelOpt,
    "unpremult": UnpremultOpt,
    "debug": DebugOpt,
}


def job_command(func: Callable[..., None]) -> Callable[..., None]:
    """Give a command every shared option; it receives them packed as `opts: BatchOptions`.

    Typer reads the parameters from `__signature__`, so one table declares them for every command.
    """
    own = [p for p in inspect.signature(func, eval_str=True).parameters.values() if p.name != "opts"]
    defaults = BatchOptions()
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=getattr(defaults, name))
        for name, kind in JOB_OPTIONS.items()
    ]
    shared.append(inspect.Parameter("memory_limit", inspect.Parameter.KEYWORD_ONLY, annotation=BudgetAliasOpt,
                                    default=None))

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> None:
        alias = kwargs.pop("memory_limit")
        opts = BatchOptions(**{name: kwargs.pop(name) for name in JOB_OPTIONS})
        if alias is not None:
            opts.memory_budget = alias  # --memory-limit wins when both spellings are given
        func(**kwargs, opts=opts)

    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + shared
    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # so inspect and typing look at the signature above, not the original's
    return wrapper


def _fail(message: str, code: int) -> Exception:
    from oxi_cli.cli.failures import finished, print_error

    print_error(message)
    return finished(code)


@contextlib.contextmanager
def reporting(debug: bool) -> Iterator[None]:
    """Turn every failure into one stderr line and its exit code (cli/failures.py decides both by cause);
    --debug re-raises with the traceback. A closed stdout passes through: the entry point ends quietly."""
    from oxi_cli.cli.failures import exit_code_for, finished, message_for, status_if_nothing_interrupted

    try:
        yield
    except (typer.Exit, BrokenPipeError):
        raise
    except (OxiError, KeyboardInterrupt, MemoryError, Exception) as e:
        if (code := status_if_nothing_interrupted(e)) is not None:
            raise finished(code) from None
        if debug:
            raise
        raise _fail(message_for(e), exit_code_for(e)) from None


def split_in_out(paths: Sequence[str], opts: BatchOptions) -> list[str]:
    """`IN OUT` (no -o) means -o OUT; otherwise every path is an input. Two frames of one sequence are never
    `IN OUT` (a forgotten -o would replace a frame): refused, or with --in-place both graded in place."""
    from oxi_cli.batch.frames import one_sequence
    from oxi_cli.errors import UsageError

    if opts.output is not None:
        inputs = list(paths)
    elif len(paths) == 2 and (sequence := one_sequence(*paths)):
        if not opts.in_place:
            raise UsageError(
                f"{paths[0]} and {paths[1]} are two frames of one sequence, not IN OUT (refused whatever --overwrite "
                "says: a forgotten -o would replace the second); -o FOLDER processes both, --in-place each onto "
                "itself, -o FILE writes one output")
        opts.output, inputs = sequence, list(paths)  # each frame written onto itself, as --in-place allows
    elif len(paths) == 2:
        opts.output, inputs = paths[1], [paths[0]]
    elif len(paths) < 2:
        raise UsageError("give an output: `IN OUT` for one file, or -o/--output FOLDER for several inputs")
    else:
        raise UsageError(f"{len(paths)} paths given without -o: name the output folder with -o/--output (e.g. -o out/)")
    if not opts.movie:  # a movie is one file for every input
        refuse_file_output(inputs, opts.output, opts.name)
    return inputs


def refuse_file_output(inputs: Sequence[str], output: str, name: str | None) -> None:
    """An output that names one image file where the inputs need a folder: say which input (or --name)
    asks for the folder, rather than that 'several inputs' were given."""
    import os

    from oxi_cli.batch.frames import find_pattern
    from oxi_cli.batch.inputs import image_extensions
    from oxi_cli.errors import UsageError

    out = Path(output)
    if output.endswith(("/", os.sep)) or out.is_dir() or (not out.is_file() and find_pattern(output)):
        return
    if not (out.is_file() or out.suffix.lower() in image_extensions()):
        return
    if name is not None:
        raise UsageError(f"--name names files inside an output folder: give -o FOLDER (e.g. -o out/), not {output}")
    for arg in inputs:
        kind = _input_kind(arg)
        if kind:
            raise UsageError(
                f"{arg} is {kind}: give -o FOLDER (e.g. -o out/) or a sequence pattern (out.####.exr), not {output}"
            )


def _input_kind(arg: str) -> str | None:
    """What makes one command-line input several files, or None for a plain file."""
    from oxi_cli.batch.frames import find_pattern

    path = Path(arg)
    if path.is_file():
        return None
    if find_pattern(arg) is not None:
        return "a frame sequence"
    if path.is_dir():
        return "a folder of inputs"
    if any(c in arg for c in "*?["):
        return "a glob matching several inputs"
    return None


def run_command(paths: Sequence[str], opts: BatchOptions, build: Callable[[], Any]) -> None:
    """Check every option and build the chain first, then run the batch; exits with its status."""
    clustered = opts.cluster and not opts.plan_only  # --plan shows plans here; a cluster only changes where files run
    if clustered:
        from oxi_cli.service.handback import own_process

        own_process("a --cluster batch")  # its Dask client and scheduler threads are a process's own
    else:  # a cluster's workers open their own devices
        from oxi_cli.backends.select import open_early

        open_early(opts.backend, opts.device)
    with reporting(opts.debug):
        opts.check()
        chain = build()
        if not opts.quiet:
            for note in dict.fromkeys(chain.notes):
                print(f"oxi: {note}", file=sys.stderr, flush=True)
        inputs = split_in_out(paths, opts)
        from oxi_cli.batch.runner import run_batch

        kind = None
        if opts.movie:  # -o review.mov: every input a frame of one movie
            from oxi_cli.batch.movie import MovieBatch as kind
        elif clustered:
            from oxi_cli.batch.cluster import ClusterBatch as kind
        code = run_batch(inputs, chain, opts, kind)
    if code:
        from oxi_cli.cli.failures import finished

        raise finished(code)
