"""process(): one file or a batch through a chain on the command's batch runner, results as values, nothing printed."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, TextIO

from oxi_cli.api.devices import Backend
from oxi_cli.api.ops import Chain, Op, as_chain
from oxi_cli.batch.options import BatchOptions
from oxi_cli.batch.progress import Reporter
from oxi_cli.batch.report import FileRecord
from oxi_cli.batch.runner import Batch, start_batch
from oxi_cli.errors import BackendUnavailable, InputError, Interrupted, OxiError, ProcessingError

FileName = str | PathLike[str]


@dataclass(frozen=True)
class FileResult:
    """What happened to one file: the record `oxi ... --json` prints for it (as_json() gives it back as JSON).

    `status`: "ok" (written), "skipped" (skip_existing found the output), "missing" (a frame of a sequence not
    on disk), "failed" (`error`, `error_type`), "interrupted" or "not_started" (the batch stopped first).
    """

    input: Path
    output: Path | None
    status: str
    frame: int | None = None
    ops: list[dict[str, Any]] = field(default_factory=list)
    backend: str | None = None
    device: str | None = None
    strategy: str | None = None
    width: int | None = None
    height: int | None = None
    out_width: int | None = None
    out_height: int | None = None
    started: float | None = None
    finished: float | None = None
    seconds: float | None = None
    stages: dict[str, float] = field(default_factory=dict)
    estimate_bytes: int | None = None
    peak_memory_bytes: int | None = None
    error: str | None = None
    error_type: str | None = None

    @classmethod
    def _of(cls, record: FileRecord) -> FileResult:
        fields = record.as_json()
        output = fields.pop("output")
        return cls(input=Path(fields.pop("input")), output=None if output is None else Path(output), **fields)

    @property
    def ok(self) -> bool:
        """Written, or skipped because its output was there already."""
        return self.status in ("ok", "skipped")

    def as_json(self) -> dict[str, Any]:
        fields = asdict(self)
        fields["input"] = str(self.input)
        fields["output"] = None if self.output is None else str(self.output)
        return fields


@dataclass(frozen=True)
class Progress:
    """Where a process() call stands, for its `progress` callback: files ended of those to process, and bytes of
    input done (within running files too). `result` is set when the call is about a file that just ended."""

    files_done: int
    files_total: int
    bytes_done: float
    bytes_total: int
    result: FileResult | None = None


def process(
    inputs: FileName | Sequence[FileName],
    output: FileName,
    chain: Chain | Op | Sequence[Op],
    *,
    backend: str | Backend | None = None,
    device: int | None = None,
    threads: int | None = None,
    name: str | None = None,
    frames: str | None = None,
    recursive: bool = False,
    jobs: int | None = None,
    memory_budget: str | int | None = None,
    vram_limit: str | int | None = None,
    strategy: str | None = None,
    skip_existing: bool = False,
    overwrite: bool = False,
    continue_on_error: bool = False,
    out_type: str | None = None,
    compression: str | None = None,
    in_place: bool = False,
    part: str | int | None = None,
    layers: str | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> list[FileResult]:
    """Run `chain` on files, as `oxi run INPUTS -o OUTPUT` would, and return one FileResult per input.

    `inputs`: files, folders, globs and sequences (plate.####.exr, plate.%04d.exr) with `frames` ("1001-1100x2");
    `output`: a file (one input), a folder (ends with "/" or exists) or a sequence pattern; `name` names files
    in a folder ("{stem}_graded{ext}"). The other arguments are the command's options of the same names; None
    leaves a recipe's setting (chain.settings), then the default. `backend`: "auto" (default), "cpu", "gpu" or
    an open_backend() Backend, kept warm across calls. Nothing is printed; `progress` is called (on oxi's
    threads) as files advance and end; if it raises, the batch stops as on Ctrl-C and its error is re-raised.

    Raises UsageError / InputError before any work for bad arguments or inputs (existing outputs need
    `overwrite` or `skip_existing`); after it, the first failed file's error (InputError, ProcessingError...),
    unless `continue_on_error`: then failed files are results with status "failed". Ctrl-C raises Interrupted.
    An error raised after files were processed carries every file's result in its `results`.
    """
    chain = as_chain(chain)
    paths = [str(inputs)] if isinstance(inputs, (str, PathLike)) else [str(p) for p in inputs]
    opts = BatchOptions(
        output=str(output), name=name, frames=frames, recursive=recursive, jobs=jobs,
        memory_budget=memory_budget, vram_limit=vram_limit,
        strategy=strategy, skip_existing=skip_existing, overwrite=overwrite, continue_on_error=continue_on_error,
        quiet=True, backend=backend if isinstance(backend, str) else None, device=device, threads=threads,
        out_type=out_type, compression=compression, in_place=in_place, part=None if part is None else str(part),
        layers=layers,
    )
    opts.apply_settings(chain.settings)
    opts.check()
    held = backend if isinstance(backend, Backend) else None
    kind = functools.partial(_PythonBatch, progress=progress, held=held)
    batch = start_batch(paths, chain._compiled(), opts, kind)
    assert isinstance(batch, _PythonBatch)
    batch.run()
    return batch.results()


class _PythonBatch(Batch):
    """The command's Batch for a Python caller: no output, no signal handler, no hook; errors kept as raised."""

    command = False
    traceback_hint = "its __cause__ holds the traceback"

    def __init__(self, *args: Any, progress: Callable[[Progress], None] | None, held: Backend | None,
                 **kwargs: Any) -> None:
        self.progress = progress
        self.held = held
        self.causes: dict[int, BaseException] = {}  # id(record) -> the exception that failed it
        self.callback_error: BaseException | None = None
        super().__init__(*args, **kwargs)

    def _outlets(self) -> tuple[TextIO, TextIO, Reporter]:
        sink = io.StringIO()
        return sink, sink, _Callbacks(self)

    def _get_backend(self, needed: bool, job: Any) -> Any:
        return self.held._raw if self.held is not None else super()._get_backend(needed, job)

    def _fail(self, rec: FileRecord, error: BaseException, message: str, code: int) -> None:
        super()._fail(rec, error, message, code)
        self.causes[id(rec)] = error

    def results(self) -> list[FileResult]:
        """Every file's result; raises what ended the work (see process())."""
        report = self.report
        results = [FileResult._of(r) for r in report.records]
        if self.callback_error is not None:
            raise self.callback_error
        if report.interrupted:
            raise _carrying(Interrupted("interrupted; no partial output was left behind"), results)
        stopping = [r for r in report.failures if r.error_type == BackendUnavailable.__name__]
        failures = stopping or ([] if self.opts.continue_on_error else report.failures)
        if failures:
            raise self._error(failures[0], results)
        return results

    def _error(self, rec: FileRecord, results: list[FileResult]) -> OxiError:
        """The failed file's error, worded as the command prints it, raised from the original exception."""
        line = rec.error if self.single and rec.error else rec.message()
        cause = self.causes.get(id(rec))
        if isinstance(cause, OxiError):
            error = cause if str(cause) == line else _reworded(cause, line)
        elif cause is not None:
            error = ProcessingError(line)
        else:  # a frame of the sequence not on disk
            error = InputError(line)
        error.__cause__ = cause if cause is not error else cause.__cause__
        return _carrying(error, results)


def _reworded(error: OxiError, line: str) -> OxiError:
    """A copy of `error` (its class and attributes) saying `line`, the message that names the file."""
    copy = type(error).__new__(type(error))
    copy.__dict__.update(vars(error))
    copy.args = (line,)
    return copy


def _carrying(error: OxiError, results: list[FileResult]) -> OxiError:
    error.results = results
    return error


class _Callbacks(Reporter):
    """The batch's Reporter for a Python caller: prints nothing, calls `progress` with where the batch stands."""

    def __init__(self, batch: _PythonBatch) -> None:
        super().__init__(io.StringIO(), "quiet", batch.single)
        self.batch = batch

    def _print(self, line: str) -> None:
        pass

    def fraction(self, index: int, nbytes: int, done: int, total: int) -> None:
        super().fraction(index, nbytes, done, total)
        self._call(None)

    def finished(self, index: int, record: FileRecord, nbytes: int) -> None:
        super().finished(index, record, nbytes)
        self._call(FileResult._of(record))

    def _call(self, result: FileResult | None) -> None:
        """Tell the caller; a callback that raises stops the batch as Ctrl-C does (outputs left whole or none)."""
        batch = self.batch
        if batch.callback_error is not None:
            raise KeyboardInterrupt
        if batch.progress is None:
            return
        with self._lock:
            done = self._done_bytes + sum(self._partial.values())
            state = Progress(self._done_files, self._total_files, done, self._total_bytes, result)
        try:
            batch.progress(state)
        except Exception as e:
            batch.callback_error = e
            batch.cancel.set()
            raise KeyboardInterrupt from None
