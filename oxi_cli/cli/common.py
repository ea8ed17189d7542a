"""Options every processing command shares, error reporting, and handing a chain to the batch runner."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from oxi_cli.batch.options import BatchOptions
from oxi_cli.errors import OxiError

BATCH = "Inputs, outputs and batches"
COMPUTE = "Compute and output format"
MESSAGES = "Messages and reports"

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
        help="Output file names in a folder: {stem} {name} {ext} {frame} {base} {parent}, e.g. '{stem}_graded{ext}'.",
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
        min=1,
        help="Files in flight at once, admitted against --memory-budget. Default 1.",
        rich_help_panel=BATCH,
        show_default=False,
    ),
]
ClusterOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        envvar="OXI_CLUSTER",
        help="Run the files as tasks on a Dask cluster: tcp://host:8786 (workers from `oxi worker`), or local / "
        "local:N worker processes here (env OXI_CLUSTER). Needs oxi[cluster].",
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
    bool, typer.Option("--quiet", "-q", help="Print nothing on success.", rich_help_panel=MESSAGES)
]
BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="auto, cpu or gpu (env OXI_BACKEND). auto picks the best device found. The CPU's kernels compile once "
        "per machine, in the background: until then jobs run without waiting, on OpenColorIO and NumPy (`oxi probe "
        "--help`).",
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
        "--threads", min=1, help="CPU threads for compute and EXR I/O: 1 to 4 per CPU core.", rich_help_panel=COMPUTE,
        show_default=False
    ),
]
OutTypeOpt = Annotated[
    str | None,
    typer.Option(
        "--out-type",
        help="Output pixel type: same (default), half, float, uint8 or uint16.",
        rich_help_panel=COMPUTE,
        show_default=False,
    ),
]
CompressionOpt = Annotated[
    str | None,
    typer.Option(
        "--compression",
        help="EXR codec (zip, piz, dwaa, none...); default: the input's.",
        rich_help_panel=COMPUTE,
        show_default=False,
    ),
]
InPlaceOpt = Annotated[
    bool, typer.Option("--in-place", help="Allow an output to replace its input.", rich_help_panel=COMPUTE)
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
    "continue_on_error": ContinueOpt,
    "json": JsonOpt,
    "quiet": QuietOpt,
    "backend": BackendOpt,
    "device": DeviceOpt,
    "threads": ThreadsOpt,
    "out_type": OutTypeOpt,
    "compression": CompressionOpt,
    "in_place": InPlaceOpt,
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
    """`IN OUT` (no -o) means -o OUT; otherwise every path is an input."""
    from oxi_cli.errors import UsageError

    if opts.output is not None:
        inputs = list(paths)
    elif len(paths) == 2:
        opts.output, inputs = paths[1], [paths[0]]
    elif len(paths) < 2:
        raise UsageError("give an output: `IN OUT` for one file, or -o/--output FOLDER for several inputs")
    else:
        raise UsageError(f"{len(paths)} paths given without -o: name the output folder with -o/--output (e.g. -o out/)")
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
    with reporting(opts.debug):
        opts.check()
        chain = build()
        inputs = split_in_out(paths, opts)
        check_device(opts, chain)
        from oxi_cli.batch.runner import run_batch

        kind = None
        if opts.cluster and not opts.plan_only:  # --plan shows plans here; a cluster only changes where files run
            from oxi_cli.batch.cluster import ClusterBatch as kind
        code = run_batch(inputs, chain, opts, kind)
    if code:
        from oxi_cli.cli.failures import finished

        raise finished(code)


def check_device(opts: BatchOptions, chain: Any) -> None:
    """--device N / --backend gpu must name a GPU that exists even when the job has nothing to compute (a
    copy never opens the device, which is where the index is checked otherwise)."""
    from oxi_cli.backends.select import resolve_kind
    from oxi_cli.errors import BackendUnavailable, UsageError

    kind = resolve_kind(opts.backend)
    if kind == "cpu" and opts.device is not None:
        raise UsageError("--device picks a GPU adapter; it cannot be used with --backend cpu")
    if chain.computes_anything() or (opts.device is None and kind != "gpu"):
        return
    try:
        from oxi_cli.backends.gpu.device import list_adapters

        adapters = list_adapters()
    except Exception as e:  # no wgpu, no loader: the GPU asked for is not there
        raise BackendUnavailable(f"no GPU adapter can be listed ({type(e).__name__}: {e}); see `oxi probe`") from None
    if opts.device is not None and opts.device >= len(adapters):
        found = f"adapters 0..{len(adapters) - 1}" if adapters else "no adapter"
        raise UsageError(f"--device {opts.device} does not exist: this machine has {found}; see `oxi probe`")
    if not adapters:
        raise BackendUnavailable("--backend gpu: no GPU adapter found; see `oxi probe`")
