"""Options every processing command shares, error reporting, and running one job end to end."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from oxi_cli.errors import OxiError

BackendOpt = Annotated[
    str | None,
    typer.Option("--backend", help="auto, cpu or gpu (env OXI_BACKEND). auto picks the best device found."),
]
DeviceOpt = Annotated[int | None, typer.Option("--device", help="GPU adapter index from `oxi probe`.")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", min=1, help="CPU threads for compute and EXR I/O.")]
OutTypeOpt = Annotated[
    str, typer.Option("--out-type", help="Output pixel type: same, half, float, uint8 or uint16.")
]
CompressionOpt = Annotated[
    str | None, typer.Option("--compression", help="EXR codec (zip, piz, dwaa, none...); default: the input's.")
]
InPlaceOpt = Annotated[bool, typer.Option("--in-place", help="Allow OUT to be the same file as IN.")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show Python tracebacks on errors.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")]
InArg = Annotated[Path, typer.Argument(help="Input image (EXR, PNG, TIFF, JPEG).", show_default=False)]
OutArg = Annotated[Path, typer.Argument(help="Output image; its extension picks the format.", show_default=False)]


@dataclass
class JobOptions:
    backend: str | None = None
    device: int | None = None
    threads: int | None = None
    out_type: str = "same"
    compression: str | None = None
    in_place: bool = False
    debug: bool = False
    quiet: bool = False


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"oxi: error: {message}", err=True)
    return typer.Exit(code)


@contextlib.contextmanager
def reporting(debug: bool) -> Iterator[None]:
    """Turn every failure into one stderr line and an exit code; --debug re-raises with the traceback."""
    try:
        yield
    except typer.Exit:
        raise
    except OxiError as e:
        if debug:
            raise
        raise _fail(str(e), e.exit_code) from None
    except KeyboardInterrupt:
        if debug:
            raise
        raise _fail("interrupted; no partial output was left behind", 130) from None
    except MemoryError:
        if debug:
            raise
        raise _fail("out of memory; try a smaller --threads or a machine with more RAM", 1) from None
    except Exception as e:  # a bug or an unexpected library failure: still one line
        if debug:
            raise
        raise _fail(f"{type(e).__name__}: {e} (rerun with --debug for the traceback)", 1) from None


def run_job(
    build_ops: Callable[[object], Sequence[object]],
    src: Path,
    dst: Path,
    opts: JobOptions,
) -> None:
    """Read IN's header, build the ops for it, pick a backend, execute, and say what happened."""
    with reporting(opts.debug):
        from oxi_cli.backends.select import get_backend
        from oxi_cli.execute import FileSink, FileSource, execute
        from oxi_cli.io import read_spec, set_io_threads

        ops = build_ops(read_spec(src))
        backend = get_backend(opts.backend, opts.device, opts.threads)
        set_io_threads(opts.threads)
        sink = FileSink(dst, compression=opts.compression, input_path=src, in_place=opts.in_place)
        result = execute(ops, FileSource(src), sink, backend, out_type=opts.out_type)
        if not opts.quiet and sys.stderr.isatty():
            names = ", ".join(op.name for op in ops) or "copy"
            typer.echo(
                f"{dst}: {result.out_width}x{result.out_height}, {names} on {result.backend}, "
                f"{result.seconds['total']:.2f} s",
                err=True,
            )
