"""Run a batch: plan every output, admit files against the memory budget, process them on worker threads,
report each file (progress, --json) and the batch (summary, exit status); Ctrl-C abandons cleanly."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from oxi_cli.backends import registry
from oxi_cli.batch.inputs import Inputs, expand_inputs
from oxi_cli.batch.interrupts import interrupts_deferred, raise_in_thread
from oxi_cli.batch.jobs import Job, RowsDone, check_out_type, plan_jobs, process_file
from oxi_cli.batch.naming import OutputTarget, resolve_target
from oxi_cli.batch.options import BatchOptions, check_device
from oxi_cli.batch.progress import Reporter
from oxi_cli.batch.report import BatchReport, FileRecord
from oxi_cli.batch.schedule import Footprint, Scheduler, admitted, memory_budget
from oxi_cli.batch.shared_backend import SerializedBackend, device_name
from oxi_cli.batch.trial import Trial, timed_candidates, worth_timing
from oxi_cli.errors import (
    BackendUnavailable,
    GpuFailure,
    OxiError,
    UsageError,
    caused_by_interrupt,
    note_settled,
)
from oxi_cli.ops.base import live

if TYPE_CHECKING:
    from oxi_cli.backends.base import Selected

CANCEL_WAIT_S = 30.0  # how long Ctrl-C waits for running files to unwind before leaving anyway
__all__ = ["Batch", "Job", "SerializedBackend", "check_out_type", "device_name", "plan_jobs", "process_file",
           "run_batch", "start_batch"]


def run_batch(args: Sequence[str], chain: Any, opts: BatchOptions, kind: Callable[..., Batch] | None = None) -> int:
    """Process every input through `chain`; returns the exit status (0, 1 failed, 130 interrupted). `kind`:
    the Batch subclass that runs the files (batch/cluster.py's runs them on Dask workers)."""
    return start_batch(args, chain, opts, kind).run()


def start_batch(args: Sequence[str], chain: Any, opts: BatchOptions, kind: Callable[..., Batch] | None = None) -> Batch:
    """The batch of `args` through `chain`: the device checked, inputs found, outputs named and every clash refused,
    nothing processed yet. The one way in for the command and for Python callers (oxi_cli/api/files.py)."""
    check_device(opts, chain)
    kind = kind or Batch
    inputs = expand_inputs(args, frames=opts.frames, recursive=opts.recursive)
    plan_outputs = getattr(kind, "plan_outputs", Batch.plan_outputs)  # a factory (a partial) plans as Batch does
    target, jobs = plan_outputs(inputs, opts, chain)
    budget = memory_budget(opts.memory_budget)
    return kind(jobs, inputs, target, chain, opts, budget)


ANY_GPU_HOLDS = 256 << 20


class Batch:
    # The `oxi` command's own ways with its process: SIGINT held back on the main thread while a record is
    # written, a second Ctrl-C leaving at once, job threads ending of Ctrl-C without a traceback, the settled
    # status noted for the entry point. A Python caller's Batch (oxi_cli/api/files.py) turns them off: its
    # process keeps its own handlers, hooks and exit.
    command = True
    # How a failure that is oxi's bug, not the user's input, tells where its traceback is.
    traceback_hint = "rerun with --debug for the traceback"

    def __init__(
        self, jobs: list[Job], inputs: Inputs, target: OutputTarget, chain: Any, opts: BatchOptions, budget: int
    ) -> None:
        self.jobs = jobs
        self.inputs = inputs
        self.target = target
        self.chain = chain
        self.opts = opts
        self.single = not inputs.batch and len(jobs) == 1
        self.scheduler_jobs = opts.jobs if opts.jobs is not None else 1  # its range: BatchOptions.check
        self.budget = budget
        self.json_lock = threading.Lock()
        self.done: queue.Queue[int] = queue.Queue()
        self.cancel = threading.Event()
        self.backend: Any = None  # raw_backend behind one lock for the worker threads (SerializedBackend)
        self.raw_backend: Selected | None = None
        self.trial: Trial | None = None
        self._serialized: dict[int, SerializedBackend] = {}
        self.fallback_lock = threading.Lock()
        self._devices: dict[int, str] = {}  # id(raw backend) -> its device's name
        self.out, self.err, self.reporter = self._outlets()
        self.report = BatchReport([j.record for j in jobs], self.single)
        self.emitted: set[int] = set()
        self._index_of = {id(j.record): j.index for j in jobs}

    @classmethod
    def plan_outputs(cls, inputs: Inputs, opts: BatchOptions, chain: Any) -> tuple[OutputTarget, list[Job]]:
        """What -o means for these inputs and each input's job (a movie's batch makes them frames of one file)."""
        if opts.movie:  # batch/movie.py's MovieBatch writes movies; other batches would make -o a folder
            raise UsageError(f"-o {opts.output} is a movie, which the oxi command writes (oxi display SEQ -o "
                             f"{Path(str(opts.output)).name} ...); give a folder or a sequence pattern here")
        target = resolve_target(opts.output, inputs, opts.name, opts.recipe_name)
        return target, plan_jobs(inputs, target, chain, opts)

    def _written_as(self, job: Job) -> Path:
        """The file whose format the job's output is computed for (windows kept or not, pixel types)."""
        return job.output

    def _outlets(self) -> tuple[TextIO, TextIO, Reporter]:
        """Where --json records, progress and messages go: stdout and the terminal's stderr."""
        # OpenEXR redirects file descriptor 2 and sys.stdout while its calls run (io/exr.py), process-wide:
        # write through our own handles so progress and JSON from this thread never land in its buffers.
        err = _private_stderr()
        mode = "quiet" if self.opts.quiet else "plain"
        if not self.opts.quiet and not self.opts.json and _isatty(err) and _isatty(sys.stdout):
            mode = "fancy"
        return sys.stdout, err, Reporter(err, mode, self.single, verbose=self.opts.verbose)

    def _interrupts_held(self, drop: bool = False) -> Any:
        """The command holds a Ctrl-C back while a record is written (_interrupts_deferred); a Python caller's
        batch installs no signal handler."""
        return interrupts_deferred(drop) if self.command else contextlib.nullcontext()

    def _note_settled(self, code: int | None) -> None:
        if self.command:
            note_settled(code)

    # --- the loop --------------------------------------------------------------------------------------

    def run(self) -> int:
        t0 = time.perf_counter()
        self._note_settled(None)
        pending: deque[Job] = deque()
        for job in self.jobs:
            if job.item.missing:
                job.record.status = "missing"
                job.record.error = "frame not on disk"
                job.record.output = None
                self.emit(job.record)
            elif self.opts.skip_existing and job.output.exists():
                job.record.status = "skipped"
                self.emit(job.record)
            else:
                job.nbytes = _size(job.item.path)
                pending.append(job)
        self.reporter.begin(len(pending), sum(j.nbytes for j in pending))
        for note in self.inputs.notes:
            self.reporter.message(f"oxi: warning: {note}")
        running: dict[int, Job] = {}
        if self.opts.plan_only:
            return self._show_plans(pending)
        try:
            self._run_files(pending, running)
        except BaseException:  # a failure of oxi's own, or a second Ctrl-C while abandoning
            self.reporter.end()
            raise
        # Every file has ended: a Ctrl-C from here on interrupts nothing, so the report still comes out whole.
        with self._interrupts_held(drop=True):
            self.reporter.end()
            self._emit_the_rest()
            self.report.seconds = time.perf_counter() - t0
            self._summarise()
            if self.err is not sys.stderr:
                self.err.close()
            return self.report.return_code()

    def _run_files(self, pending: deque[Job], running: dict[int, Job]) -> None:
        """Every pending file to its end, or Ctrl-C's abandoning of them; then note the batch's status."""
        try:
            if pending:
                self._open_backend()
            self._loop(pending, running)
        except KeyboardInterrupt:
            self._abandon(running)
            # A Ctrl-C that lands once every file has finished (its output committed) interrupted nothing: saying
            # "interrupted, no output left" beside a written file would be wrong.
            self.report.interrupted = any(r.status in ("interrupted", "not_started") for r in self.report.records)
        self._note_settled(self.report.return_code())

    def _show_plans(self, pending: deque[Job]) -> int:
        """--plan: say what each file would take and why, and process nothing."""
        import json

        from rich.console import Console
        from rich.panel import Panel

        self.reporter.end()
        if pending:
            self._open_backend()
        console = Console(file=self.out)
        for job in pending:
            if not self._prepare(job):
                self.reporter.message(f"oxi: error: {job.record.message()}")
                continue
            plan = job.plan
            estimate = self.raw_backend.estimate  # every backend's seconds, when a job was weighed
            if self.opts.json:
                doc = {"input": str(job.item.path), "output": str(job.output), "backend": self.backend.name,
                       "backend_reason": self._backend_reason(), **plan.to_dict()}
                if estimate is not None:
                    doc["estimate"] = estimate.to_dict()
                print(json.dumps(doc), file=self.out, flush=True)
                continue
            why = [f"why: {plan.reason}", *([f"backend: {r}"] if (r := self._backend_reason()) else []),
                   *(estimate.lines() if estimate is not None else [])]
            body = "\n".join([plan.summary(), *why, *(f"note: {n}" for n in plan.notes)])
            title = f"{job.item.path.name} -> {job.output.name}: {plan.strategy} on {self.backend.name}"
            console.print(Panel(body, title=title, title_align="left", expand=False))
        return self.report.return_code()  # as the run would end: a single file's own code (2 for bad input)

    def _emit_the_rest(self) -> None:
        for job in self.jobs:  # the rest: never reached, or caught between two steps by Ctrl-C
            if job.index not in self.emitted:
                if job.record.status == "not_started" and job.thread is not None:
                    job.record.status, job.record.error = "interrupted", "interrupted"
                self.emit(job.record)

    def _open_backend(self) -> None:
        from oxi_cli.backends.select import auto_candidates
        from oxi_cli.io import set_io_threads

        if self.command or self.opts.threads is not None:  # a Python caller's EXR threads change only if it asks
            set_io_threads(self.opts.threads)
        needed = self.chain.computes_anything()
        job = self._weighed_job() if needed else None
        self.raw_backend = self._get_backend(needed, job)
        self.backend = self._serialize(self.raw_backend)
        weighed = self.raw_backend.weighed
        if self.scheduler_jobs == 1 and not self.opts.plan_only and worth_timing(weighed, job and job.files):
            self.trial = Trial(auto_candidates(self.raw_backend, self.opts.threads, timed_candidates(weighed)))
        vram = None
        # Only with several jobs does the device's memory decide anything (asking waits for the GPU to open).
        if self.scheduler_jobs > 1 and registry.kind(self.backend.name).own_memory:
            vram = int(self.backend.limits().usable_memory)
        self.scheduler = Scheduler(self.scheduler_jobs, self.budget, vram)

    def _get_backend(self, needed: bool, job: Any) -> Selected:
        """The backend --backend / --device / --threads ask for, weighing `job` for `auto`."""
        from oxi_cli.backends.select import get_backend

        return get_backend(self.opts.backend, self.opts.device, self.opts.threads, needed=needed, job=job)

    def _serialize(self, raw: Any) -> SerializedBackend:
        return self._serialized.setdefault(id(raw), SerializedBackend(raw))

    def _raw(self, job: Job) -> Selected:
        return job.backend if job.backend is not None else self.raw_backend

    def _backend_reason(self) -> str:
        return self.raw_backend.reason if self.raw_backend is not None else ""

    def _weighed_job(self) -> Any:
        """The first file's shape and chain, for `auto` to weigh the backends by (files of a batch are alike)."""
        from oxi_cli.backends.select import Workload
        from oxi_cli.io import read_spec
        from oxi_cli.io.common import holds_windows

        first = next((j for j in self.jobs if not j.item.missing), None)
        if first is None:
            return None
        try:
            spec = read_spec(first.item.path)
            ops = self.chain.ops_for(spec.width, spec.height, holds_windows(self._written_as(first)),
                                     spec.meta.windows)
        except OxiError:
            return None  # reported when the file itself is processed
        half = all(kind == "half" for kind in spec.meta.pixel_types.values())
        files = sum(not j.item.missing for j in self.jobs)
        return Workload(ops, spec.width, spec.height, len(spec.channels), 2 if half else 4, files)

    def _loop(self, pending: deque[Job], running: dict[int, Job]) -> None:
        stop = False
        while pending or running:
            while pending and not stop:
                job = pending[0]
                if job.footprint is None and not self._prepare(job):
                    pending.popleft()
                    self.emit(job.record)
                    self.reporter.finished(job.index, job.record, job.nbytes)
                    stop = self._stops(job.record)
                    continue
                assert job.footprint is not None
                if not self.scheduler.admits(job.footprint):
                    break
                pending.popleft()
                self._start(job, running)
            if not running:
                break
            try:
                index = self.done.get(timeout=0.2)
            except queue.Empty:
                continue
            job = running.pop(index)
            assert job.thread is not None and job.footprint is not None
            job.thread.join()
            self.scheduler.finish(job.footprint)
            self.emit(job.record)
            self.reporter.finished(job.index, job.record, job.nbytes)
            stop = stop or self._stops(job.record)

    def _stops(self, record: FileRecord) -> bool:
        """The first failure stops the batch unless --continue-on-error; an unusable device always does."""
        if record.status != "failed":
            return False
        return not self.opts.continue_on_error or record.error_type == BackendUnavailable.__name__

    def _prepare(self, job: Job) -> bool:
        """Read the header, resolve the ops for its size, estimate memory; False (record failed) on error."""
        from oxi_cli.io import read_spec
        from oxi_cli.io.common import holds_windows

        rec = job.record
        try:
            spec = read_spec(job.item.path)
            job.ops = self.chain.ops_for(spec.width, spec.height, holds_windows(self._written_as(job)),
                                         spec.meta.windows)
            if self.trial is not None and job.backend is None:
                job.backend, job.slot = self.trial.next_backend()
                if (verdict := self.trial.verdict()) and not self.opts.quiet:
                    self.reporter.message(f"oxi: {verdict}")
            job.plan = self._plan(job)
            job.footprint = Footprint(job.plan.ram_bytes, job.plan.vram_bytes)
            if self.target.kind != "file":
                job.output.parent.mkdir(parents=True, exist_ok=True)
        except OxiError as e:
            self._fail(rec, e, str(e), e.exit_code)
            self._trial_finished(job)
            return False
        except OSError as e:
            self._fail(rec, e, f"cannot create the output folder {job.output.parent}: {e.strerror or e}", 1)
            self._trial_finished(job)
            return False
        rec.width, rec.height = spec.width, spec.height
        rec.ops = self.chain.describe(job.ops)
        rec.estimate_bytes = job.footprint.ram
        rec.strategy = job.plan.strategy
        return True

    def _plan(self, job: Job) -> Any:
        """The file's plan, without waiting for a GPU still opening when nothing needs its limits: a chain with
        nothing to compute, or one whose pieces any GPU holds (planning on host memory counts the device
        copy in RAM too, so it never asks for less than a discrete GPU needs). `--plan` and `--vram-limit`
        always see the real device."""
        from oxi_cli.backends.base import HostOnly
        from oxi_cli.stream import plan_for_files

        def plan(backend: Any) -> Any:
            return plan_for_files(
                job.ops,
                job.item.path,
                self._written_as(job),
                backend,
                strategy=self.opts.strategy or "auto",
                memory_limit=self.budget,
                vram_limit=self.opts.vram_limit,
                out_type=self.opts.out_type or "same",
                selection=self.opts.selection(),
            )

        if not live(job.ops):
            return plan(HostOnly())
        raw = self._raw(job)
        opening = not raw.ready
        if opening and not self.opts.plan_only and self.opts.vram_limit is None:
            provisional = plan(HostOnly())
            if provisional.vram_bytes <= ANY_GPU_HOLDS:
                return provisional
        return plan(raw)

    def _trial_finished(self, job: Job) -> None:
        if self.trial is not None and job.slot is not None:
            rec = job.record
            self.trial.finished(job.slot, rec.seconds if rec.status == "ok" else None, rec.backend)

    def _fail(self, rec: FileRecord, error: BaseException, message: str, code: int) -> None:
        """Record a failure; call inside the `except` block (the traceback is taken from there)."""
        rec.status, rec.error, rec.exit_code, rec.error_type = "failed", message, code, type(error).__name__
        if self.opts.debug:
            rec.traceback = traceback.format_exc()

    def _start(self, job: Job, running: dict[int, Job]) -> None:
        assert job.footprint is not None
        self.scheduler.start(job.footprint)
        job.thread = threading.Thread(target=self._guarded, args=(job,), name=f"oxi-job-{job.index}", daemon=True)
        running[job.index] = job
        self.reporter.started(job.index, job.item.path.name)
        job.record.started = time.time()
        job.thread.start()

    # --- one file, on a worker thread --------------------------------------------------------------------

    def _guarded(self, job: Job) -> None:
        # Ctrl-C's exception may land in _work's own handlers; it must end the thread quietly, not as a crash.
        with contextlib.suppress(KeyboardInterrupt):
            self._work(job)

    def _work(self, job: Job) -> None:
        rec = job.record
        t0 = time.perf_counter()
        result = None

        def progress(done: int, total: int) -> None:
            if self.cancel.is_set():
                raise KeyboardInterrupt
            self.reporter.fraction(job.index, job.nbytes, done, total)

        try:
            needs = job.footprint.ram if job.footprint is not None else 0  # a cluster's files: its workers admit
            with admitted(needs, self.cancel.is_set):  # the service's budget, shared with other jobs
                result = self._process(job, progress)
            self._fill(job, result)
        except KeyboardInterrupt:
            self._stopped(job, result)
        except OxiError as e:
            self._fail(rec, e, str(e), e.exit_code)
        except MemoryError as e:
            fewer = "fewer --jobs or " if (self.opts.jobs or 1) > 1 else ""
            self._fail(rec, e, f"out of memory; try {fewer}a smaller --memory-budget, or free memory", 1)
        except Exception as e:  # a bug or an unexpected library failure: still one line
            from oxi_cli.io.common import one_line

            if caused_by_interrupt(e):  # the Ctrl-C landed inside a C extension's import
                self._stopped(job, result)
            else:
                self._fail(rec, e, f"{type(e).__name__}: {one_line(e)} ({self.traceback_hint})", 1)
        finally:
            rec.finished = time.time()
            rec.seconds = time.perf_counter() - t0
            rec.peak_memory_bytes = _peak_rss()
            self._trial_finished(job)
            self.done.put(job.index)

    def _process(self, job: Job, progress: RowsDone) -> Any:
        """process_file(); after a device failure mid-file, `auto` warns, switches to the host for the rest of
        the batch and redoes this file there (DeferredBackend.fall_back); a backend named fails the file."""
        raw = self._raw(job)
        backend = self._serialize(raw)
        try:
            return process_file(job, backend, self.opts, progress)
        except OxiError as e:
            if not isinstance(e, GpuFailure):
                raise
            with self.fallback_lock:
                if not raw.fell_back:  # the first failing file switches; the others just redo
                    raw.fall_back(e)
        return process_file(job, backend, self.opts, progress)

    def _fill(self, job: Job, result: Any) -> None:
        rec = job.record
        rec.status = "ok"
        rec.backend = result.backend
        rec.device = self._device_name(self._raw(job))
        rec.strategy = result.strategy
        rec.out_width, rec.out_height = result.out_width, result.out_height
        rec.stages = {k: float(v) for k, v in result.seconds.items() if k != "total"}

    def _stopped(self, job: Job, result: Any) -> None:
        """A Ctrl-C (or the batch's cancel) reached the file: it is done if its output was already committed,
        else interrupted (the atomic writer has deleted its temporary)."""
        if result is not None:
            self._fill(job, result)
        elif _written_since(job.output, job.record.started):
            self._fill_committed(job)
        else:
            job.record.status = job.record.error = "interrupted"

    def _fill_committed(self, job: Job) -> None:
        """The record of a file whose output was renamed into place before Ctrl-C landed (in the executor's
        last progress call, say): the file is whole and on disk, so it is done, not interrupted."""
        rec = job.record
        rec.status, rec.error, rec.backend = "ok", None, self._raw(job).name
        rec.strategy, rec.out_width, rec.out_height = job.plan.strategy, job.plan.out_width, job.plan.out_height

    def _device_name(self, raw: Selected) -> str:
        """What the file ran on, named once per backend. A chain with nothing to compute used no device, however
        far the backend's background open got: said so, and not kept (a later file may use it)."""
        if id(raw) in self._devices:
            return self._devices[id(raw)]
        kind = registry.kind(raw.name)
        if kind.devices and (not self.chain.computes_anything() or not raw.ready):
            return f"{kind.label} not used (nothing to compute)"
        name = self._devices[id(raw)] = device_name(raw)
        return name

    # --- Ctrl-C ------------------------------------------------------------------------------------------

    def _abandon(self, running: dict[int, Job]) -> None:
        """Stop every running file: raise KeyboardInterrupt in its thread (it lands between Python steps,
        where the atomic writer deletes its temporary), wait, then sweep any temporary left behind."""
        self.cancel.set()
        for job in running.values():
            if job.thread is not None and job.thread.is_alive():
                raise_in_thread(job.thread, quiet=self.command)
        deadline = time.monotonic() + CANCEL_WAIT_S
        for job in running.values():
            while job.thread is not None and job.thread.is_alive() and time.monotonic() < deadline:
                try:
                    job.thread.join(0.1)
                except KeyboardInterrupt:  # a second Ctrl-C: leave now
                    self._sweep(running.values())
                    if not self.command:  # a Python caller's process is its own to end
                        raise
                    self.err.write("oxi: interrupted again; leaving now\n")
                    self.err.flush()
                    os._exit(130)
            if job.record.status == "not_started" and _written_since(job.output, job.record.started):
                # The output went into place before the Ctrl-C reached the thread, which ended before its record
                # did (the exception can land anywhere in it, its own handler included): the file is done.
                self._fill_committed(job)
            elif job.record.status == "not_started":  # still running after the wait: abandoned
                job.record.status, job.record.error = "interrupted", "interrupted"
            self.emit(job.record)
        self._sweep(running.values())

    def _sweep(self, jobs: Any) -> None:
        """Delete temporaries of abandoned outputs (io.atomic names them .<stem>.oxi-tmp-*<suffix>)."""
        from oxi_cli.io.atomic import remove_temporaries, temporaries_of

        for job in jobs:
            if job.record.status != "ok":
                remove_temporaries(temporaries_of(job.output))

    # --- output --------------------------------------------------------------------------------------

    def emit(self, rec: FileRecord) -> None:
        """Write a file's --json record, once, whole: a Ctrl-C landing mid-write waits until the line is out
        (else the record counted as written was lost, and scripts saw one file fewer)."""
        with self.json_lock, self._interrupts_held():
            index = self._index_of[id(rec)]
            if index in self.emitted:
                return
            if self.opts.json:
                self.out.write(json.dumps(rec.as_json()) + "\n")
                self.out.flush()
            self.emitted.add(index)

    def _summarise(self) -> None:
        report = self.report
        if self.single:
            if report.interrupted:
                self.reporter.message("oxi: error: interrupted; no partial output was left behind")
            return
        if self.opts.quiet and not report.failures and not report.interrupted:
            return
        for line in report.summary():
            self.reporter.message(f"oxi: {line}" if not line.startswith("  ") else line)


def _written_since(path: Path, since: float | None) -> bool:
    try:
        return since is not None and path.stat().st_mtime >= since
    except OSError:
        return False


def _private_stderr() -> TextIO:
    try:
        return open(os.dup(sys.stderr.fileno()), "w", buffering=1, encoding="utf-8", errors="replace")  # noqa: SIM115
    except (OSError, ValueError, AttributeError):  # no real stderr (embedded, captured): use what there is
        return sys.stderr


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _peak_rss() -> int | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


