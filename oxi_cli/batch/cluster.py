"""Run a batch on a Dask cluster: one task per file on warm worker processes, with the local batch's records."""

from __future__ import annotations

import contextlib
import ctypes
import glob
import logging
import os
import re
import threading
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from oxi_cli.errors import OxiError, UsageError
from oxi_cli.host import cores

try:
    from distributed import Client, WorkerPlugin, as_completed, get_worker
except ImportError:  # only --cluster and `oxi worker` get here
    raise UsageError("--cluster needs Dask: pip install 'oxi[cluster]' (dask and distributed)") from None

from oxi_cli.backends import registry
from oxi_cli.batch.inputs import InputItem
from oxi_cli.batch.interrupts import raise_in_thread
from oxi_cli.batch.options import BatchOptions
from oxi_cli.batch.report import FileRecord
from oxi_cli.batch.runner import Batch, Job
from oxi_cli.batch.schedule import memory_budget
from oxi_cli.batch.shared_backend import SerializedBackend

CONNECT_TIMEOUT_S = 3.0  # an unreachable scheduler is reported after this, not after Dask's 30 s default
CANCEL_WAIT_S = 30.0  # how long Ctrl-C waits for running files to unwind on the workers
MEMORY, VRAM = "MEMORY", "VRAM"  # worker resources, in bytes: oxi's memory budget and the GPU's usable memory
# Dask's statistical profiler samples every thread's stack every 10 ms (and the GIL monitor every 1 ms): on a
# worker busy with one frame per core that cost ~10% of the batch's time on a 2-core x86-64 machine (AVX-512).
QUIET_WORKERS = {"distributed.worker.profile.enabled": False, "distributed.admin.system-monitor.gil.enabled": False}
_LOCAL = re.compile(r"local(?::(\d+))?")
_REMOTE = re.compile(r"(tcp|tls|inproc|ucx|ws|wss)://\S+|[\w.-]+:\d+")

# The fields of a FileRecord that the worker fills in (the client already has the rest from planning).
WORKER_FIELDS = ("status", "backend", "device", "strategy", "out_width", "out_height", "stages", "started",
                 "finished", "seconds", "peak_memory_bytes", "error", "error_type", "exit_code", "traceback")


@dataclass(frozen=True)
class ClusterAddress:
    """Where tasks go: a running scheduler (`address`), or a LocalCluster of `workers` processes."""

    address: str | None
    workers: int = 0

    @property
    def local(self) -> bool:
        return self.address is None


def parse_address(text: str, jobs: int | None = None) -> ClusterAddress:
    """`local`, `local:N` (N worker processes; `local` takes --jobs or one per core), or a scheduler address
    (whose workers set their own concurrency: --jobs, perhaps from a recipe, is ignored there)."""
    text = text.strip()
    m = _LOCAL.fullmatch(text)
    if m:
        workers = int(m.group(1)) if m.group(1) else (jobs or cores())
        if workers < 1:
            raise UsageError(f"--cluster {text}: a local cluster needs at least one worker")
        return ClusterAddress(None, workers)
    if not _REMOTE.fullmatch(text):
        raise UsageError(f"--cluster {text!r}: give a scheduler address (tcp://host:8786), local or local:N")
    return ClusterAddress(text if "://" in text else f"tcp://{text}")


# --- the client side --------------------------------------------------------------------------------------


class ClusterBatch(Batch):
    """A Batch whose files run as Dask tasks: the client plans (headers only) and reports; workers compute.

    Planning, records, progress, summary and exit status are the local batch's; only where a file runs
    changes. The client never opens a compute backend: it plans on host limits (HostOnly), which counts the
    device copy in RAM too, and each worker re-plans on its own device before running the file.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.where = parse_address(self.opts.cluster or "", self.opts.jobs)
        self.batch_id = uuid.uuid4().hex[:12]
        self.client: Any = None
        self.cluster: Any = None
        self.futures: dict[Any, Job] = {}
        self.backend_key: tuple[Any, ...] = ()
        self.capacity: dict[str, float] = {}  # the largest amount of each resource one worker advertises

    def run(self) -> int:
        # Connect first: an unreachable scheduler is the only line printed, before any file is looked at.
        self.client, self.cluster = connect(self.where, self._worker_budget())
        try:
            return super().run()
        finally:
            self._close()

    def _open_backend(self) -> None:
        from oxi_cli.backends.base import HostOnly

        self.raw_backend = self.backend = HostOnly()
        self.capacity = {r: max(a) for r in (MEMORY, VRAM) if (a := self._advertised(r))}
        self.budget = self._plan_budget()
        # Local workers share the cores: each one's kernels get its share, as one --jobs process would.
        threads = self.opts.threads or (max(1, cores() // self.where.workers) if self.where.local
                                         else None)
        # The client's OXI_BACKEND decides, not whatever a worker was started with.
        self.backend_key = (self.opts.backend or os.environ.get("OXI_BACKEND"), self.opts.device, threads)
        self.client.register_plugin(OxiPlugin(self.backend_key), name="oxi")

    def _worker_budget(self) -> int:
        """A local cluster splits the batch's memory budget between its workers, as --jobs shares it."""
        return memory_budget(self.opts.memory_budget) // max(1, self.where.workers)

    def _plan_budget(self) -> int:
        """The memory one file may plan for: a local worker's share; on a scheduler, --memory-budget, else the
        smallest budget a worker advertises."""
        if self.where.local:
            return self._worker_budget()
        if self.opts.memory_budget is not None:
            return memory_budget(self.opts.memory_budget)
        advertised = self._advertised(MEMORY)
        return int(min(advertised)) if advertised else memory_budget(None)

    def _advertised(self, resource: str) -> list[float]:
        workers = self.client.scheduler_info(n_workers=-1).get("workers", {}).values()
        return [w["resources"][resource] for w in workers if resource in w.get("resources", {})]

    def _loop(self, pending: Any, running: dict[int, Job]) -> None:
        chain = self._chain_task()
        stop = False
        for job in pending:
            if not self._prepare(job):  # unreadable header, bad plan: fails here, as in a local batch
                self.emit(job.record)
                self.reporter.finished(job.index, job.record, job.nbytes)
                stop = stop or self._stops(job.record)
                if stop:
                    break
                continue
            self._submit(job, chain, running)
        if stop:
            self._stop_workers("stop")
        for future, result in self._completed():
            job = self.futures.pop(future)
            running.pop(job.index, None)
            self._collect(job, result)
            self.emit(job.record)
            self.reporter.finished(job.index, job.record, job.nbytes)
            if not stop and self._stops(job.record):
                stop = True
                self._stop_workers("stop")  # files running finish; the rest come back not started

    def _chain_task(self) -> Any:
        """The chain as a task whose result the files' tasks take, not as scattered data: Dask's memory manager
        keeps one replica of either, and a worker dying with the only copy of scattered data failed every later
        file (FutureCancelledError), where a task's result is computed again."""
        import dask

        # Its tables travel once, inside the task: not the "large graph" Dask warns of.
        with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1GiB"}):
            return self.client.submit(_the_chain, self.chain, key=f"oxi-chain-{self.batch_id}", pure=False)

    def _submit(self, job: Job, chain: Any, running: dict[int, Job]) -> None:
        assert job.footprint is not None
        task = Task(self.batch_id, job.index, job.item, job.output, job.record.width or 0,
                    job.record.height or 0, self.opts, self.budget, self.backend_key, max(1, self.where.workers),
                    job.codec)
        future = self.client.submit(run_task, task, chain, key=f"oxi-{job.item.path.name}-{self.batch_id}-{job.index}",
                                    resources=self._resources(job), priority=-job.index, pure=False)
        self.futures[future] = job
        running[job.index] = job

    def _resources(self, job: Job) -> dict[str, float]:
        """What the file's plan needs, capped at what the largest worker has (a file too big for every budget
        then runs alone on the largest worker instead of waiting forever)."""
        assert job.footprint is not None
        wanted: dict[str, float] = {}
        if MEMORY in self.capacity:
            wanted[MEMORY] = min(job.footprint.ram, self.capacity[MEMORY])
        # Only a batch that must run on GPUs asks for device memory: `auto` may also run on CPU-only workers.
        if VRAM in self.capacity and _own_memory(self.backend_key[0], auto=False):
            wanted[VRAM] = min(job.footprint.vram, self.capacity[VRAM])
        return wanted

    def _collect(self, job: Job, fields: dict[str, Any] | BaseException) -> None:
        """Copy the worker's record into the client's; a task Dask gave up on (its workers kept dying) fails."""
        if isinstance(fields, BaseException):  # KilledWorker, a lost connection: the file failed, the batch goes on
            from oxi_cli.io.common import one_line

            try:
                raise fields
            except BaseException as e:  # _fail takes the traceback from the except block it runs in
                self._fail(job.record, e, f"{type(e).__name__}: {one_line(e)}", 1)
            return
        for name, value in fields.items():
            setattr(job.record, name, value)

    def _completed(self, timeout: float | None = None) -> Any:
        """(future, record fields or the task's exception) as tasks finish. Results come gathered in batches
        (a result() per future costs a round trip each); the loop is given: this client is not the default."""
        if not self.futures:
            return iter(())
        return as_completed(list(self.futures), timeout=timeout, loop=self.client.loop, with_results=True,
                            raise_errors=False)

    def _stop_workers(self, how: str) -> None:
        with contextlib.suppress(Exception):  # a worker gone meanwhile has nothing to stop
            self.client.run(stop_batch, self.batch_id, how, wait=True)

    def _abandon(self, running: dict[int, Job]) -> None:
        """Ctrl-C: files not started never start, running ones are interrupted on their workers (their
        temporaries deleted there); whatever has not answered in time is swept from here."""
        self.cancel.set()
        self._stop_workers("abort")
        deadline = time.monotonic() + CANCEL_WAIT_S
        with contextlib.suppress(Exception, KeyboardInterrupt):
            for future, result in self._completed(timeout=max(0.1, deadline - time.monotonic())):
                job = self.futures.pop(future)
                self._collect(job, result)
        for future, job in self.futures.items():
            future.cancel()
            job.record.status, job.record.error = "interrupted", "interrupted"
        self._close()  # a local cluster's workers die here: sweep after, not before
        for job in running.values():
            self.emit(job.record)
        self._sweep(running.values())

    def _close(self) -> None:
        for thing in (self.client, self.cluster):
            if thing is not None:
                with contextlib.suppress(Exception):
                    thing.close()
        self.client = self.cluster = None


def connect(where: ClusterAddress, worker_memory: int) -> tuple[Any, Any]:
    """A Client on the scheduler, or on a new LocalCluster; an unreachable scheduler is a UsageError."""
    if where.local:
        cluster = local_cluster(where.workers, worker_memory)
        return Client(cluster, set_as_default=False), cluster
    logging.getLogger("distributed").setLevel(logging.ERROR)  # the CLI reports; Dask's chatter would interleave
    try:
        return Client(where.address, timeout=CONNECT_TIMEOUT_S, set_as_default=False), None
    except (OSError, TimeoutError) as e:
        raise UsageError(f"--cluster: no Dask scheduler answers at {where.address} ({_reason(e)}); "
                         "start one with `dask scheduler` and `oxi worker`, or use --cluster local") from None


def _reason(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) < 120 else text[:117] + "..."


def local_cluster(workers: int, worker_memory: int, threads_per_worker: int = 1) -> Any:
    """N worker processes on this machine, each advertising its share of the memory budget.

    One thread per worker: N files in flight, as `--jobs N`; each process has its own backend, so no
    file waits for another's kernel. Dask's own logging stays quiet (errors only).
    """
    import multiprocessing

    import dask
    from distributed import LocalCluster

    if "forkserver" in multiprocessing.get_all_start_methods():
        # Workers forked from a clean server start in half the time of spawned ones (1.5 s vs 3 s for two on
        # a 2-core x86-64 machine (AVX-512)): spawn re-imports the CLI's whole __main__ in each.
        dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"})
    dask.config.set(QUIET_WORKERS)
    return LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker, processes=True,
                        resources={MEMORY: worker_memory}, dashboard_address=":0", silence_logs=logging.ERROR,
                        preload=[__name__])


# --- the worker side ---------------------------------------------------------------------------------------

_LOCK = threading.Lock()
_BACKENDS: dict[tuple[Any, ...], tuple[Any, Any]] = {}  # (kind, device, threads) -> (backend, serialised)
_STOPS: dict[str, str] = {}  # batch id -> "stop" (start nothing more) or "abort" (interrupt running files too)
_CANCELS: dict[str, threading.Event] = {}
_RUNNING: dict[str, dict[int, int]] = {}  # batch id -> {file index: thread id}


class OxiPlugin(WorkerPlugin):
    """Opens the batch's backend on each worker when registered and keeps it for every later task and batch
    (Numba kernels compiled, GPU device opened once per worker process, not once per file)."""

    name = "oxi"

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key  # (--backend, --device, threads)

    def setup(self, worker: Any) -> None:
        worker_backend(self.key)


def worker_backend(key: tuple[Any, ...]) -> tuple[Any, Any]:
    """The worker's backend for (kind, device, threads), opened once (in the background, as the CLI does)."""
    from oxi_cli.backends.select import get_backend
    from oxi_cli.io import set_io_threads

    with _LOCK:
        if key not in _BACKENDS:
            kind, device, threads = key
            set_io_threads(threads)
            backend = get_backend(kind, device, threads)
            _BACKENDS[key] = (backend, SerializedBackend(backend))
        return _BACKENDS[key]


@dataclass
class Task:
    """One file for a worker: where it comes from and goes, its size (read by the client) and the options."""

    batch: str
    index: int
    item: InputItem
    output: Path
    width: int
    height: int
    opts: BatchOptions
    budget: int
    backend_key: tuple[Any, ...]
    gpu_share: int = 1  # local:N: N worker processes share this machine's GPU
    codec: str | None = None  # the job's, checked by the client (plan_jobs)


class NullReporter:
    """The worker reports nothing itself; the client shows the batch's progress from the futures."""

    def fraction(self, *args: Any) -> None:
        pass


class WorkerBatch(Batch):
    """The local batch's per-file code (_plan, _work: process_file, GPU fallback, error records) on a worker."""

    def __init__(self, task: Task, chain: Any, backend: Any, serialised: Any, cancel: threading.Event) -> None:
        import queue

        self.opts, self.chain, self.budget, self.cancel = task.opts, chain, task.budget, cancel
        self.raw_backend, self.backend = backend, serialised
        self.reporter, self.done = NullReporter(), queue.Queue()  # type: ignore[assignment]
        self.fallback_lock = threading.Lock()
        self.trial = None
        self._serialized = {id(backend): serialised}  # the worker's one lock, shared by its tasks' threads
        self._devices = {}


def _the_chain(chain: Any) -> Any:
    return chain


def run_task(task: Task, chain: Any) -> dict[str, Any]:
    """Process one file on this worker; returns the FileRecord fields the worker knows. Idempotent: a retry
    after a worker died rewrites the same output (atomically) and first removes the dead worker's temporary."""
    job = Job(task.index, task.item, task.output, FileRecord(task.item.path, task.output, frame=task.item.frame),
              codec=task.codec)
    rec = job.record
    if _STOPS.get(task.batch):
        return {"status": "not_started"}
    started = time.time()
    backend, serialised = worker_backend(task.backend_key)
    with _LOCK:
        cancel = _CANCELS.setdefault(task.batch, threading.Event())
    runner = WorkerBatch(task, chain, backend, serialised, cancel)
    if task.gpu_share > 1 and task.opts.vram_limit is None and registry.kind(backend.name).own_memory:
        # local:N puts N processes on this machine's GPU: each plans for its share of the device's memory.
        runner.opts = replace(task.opts, vram_limit=int(backend.limits().usable_memory) // task.gpu_share)
    remove_stale_temporaries(task.output, started)
    try:
        from oxi_cli.io import read_spec
        from oxi_cli.io.common import holds_windows

        spec = read_spec(task.item.path)
        job.ops = chain.ops_for(spec.width, spec.height, holds_windows(runner._written_as(job)), spec.meta.windows)
        job.plan = runner._plan(job)
    except OxiError as e:
        runner._fail(rec, e, str(e), e.exit_code)
        return _fields(rec)
    rec.started = started
    _guarded_work(runner, job, task.batch)
    if rec.device:
        rec.device = f"{rec.device} @ {_worker_address()}"
    return _fields(rec)


def _guarded_work(runner: WorkerBatch, job: Job, batch: str) -> None:
    """runner._work(job), registered so that an abort can interrupt it (KeyboardInterrupt in this thread, as
    the local batch does); a pending interrupt is cleared before the thread goes back to Dask."""
    ident = threading.get_ident()
    try:
        with _LOCK:
            if _STOPS.get(batch) == "abort":
                return
            _RUNNING.setdefault(batch, {})[job.index] = ident
        try:
            runner._work(job)
        finally:
            with _LOCK:
                _RUNNING.get(batch, {}).pop(job.index, None)
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)
    except KeyboardInterrupt:  # landed between registering and _work's own handlers
        if job.record.status == "not_started":
            job.record.status, job.record.error = "interrupted", "interrupted"


def stop_batch(batch: str, how: str) -> None:
    """Run on every worker (Client.run): 'stop' starts no more files of the batch; 'abort' also interrupts
    its running files."""
    with _LOCK:
        _STOPS[batch] = how
        if how != "abort":
            return
        _CANCELS.setdefault(batch, threading.Event()).set()
        threads = {t.ident: t for t in threading.enumerate()}
        for ident in _RUNNING.get(batch, {}).values():
            if ident in threads:
                raise_in_thread(threads[ident])


def remove_stale_temporaries(output: Path, before: float) -> None:
    """Delete temporaries of `output` last written before `before`: a worker killed mid-write leaves one."""
    pattern = f".{glob.escape(output.stem)}.oxi-tmp-*{glob.escape(output.suffix)}"
    with contextlib.suppress(OSError):
        for tmp in output.parent.glob(pattern):
            with contextlib.suppress(OSError):
                if tmp.stat().st_mtime < before:
                    tmp.unlink()


def _fields(rec: FileRecord) -> dict[str, Any]:
    return {name: getattr(rec, name) for name in WORKER_FIELDS}


def _worker_address() -> str:
    try:
        return str(get_worker().address)
    except ValueError:  # not on a worker (called directly in a test)
        return "local"


def dask_setup(worker: Any) -> None:
    """`dask worker --preload oxi_cli.batch.cluster`: advertise oxi's memory budget (and the GPU's memory
    when the worker has a GPU) as resources, unless the worker was given its own with --resources."""
    resources = worker.state.total_resources
    if MEMORY not in resources:
        limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
        budget = memory_budget(None)
        _advertise(worker, MEMORY, min(budget, limit // 2) if limit and not os.environ.get("OXI_MEMORY_BUDGET")
                   else budget)
    if VRAM not in resources and _own_memory(os.environ.get("OXI_BACKEND"), auto=True):
        vram = _device_memory()
        if vram:
            _advertise(worker, VRAM, vram)


def _own_memory(asked: str | None, auto: bool) -> bool:
    """Whether the backend a --backend / OXI_BACKEND value names computes in memory of its own; `auto` (or none
    given) answers `auto`: it may run on such a device or not."""
    name = (asked or "auto").strip().lower()
    return auto if name not in registry.KINDS else registry.kind(name).own_memory


def _advertise(worker: Any, name: str, amount: float) -> None:
    worker.state.total_resources[name] = amount
    worker.state.available_resources[name] = amount


def _device_memory() -> int | None:
    """The usable memory of the device `auto` would pick, or None without one that has memory of its own."""
    from oxi_cli.backends.select import auto_choice, devices_possible

    try:
        if not devices_possible():
            return None
        choice = auto_choice()
        if choice.device is None or not registry.kind(choice.kind).own_memory:
            return None
        backend, _ = worker_backend((None, None, None))
        return int(backend.limits().usable_memory) if registry.kind(backend.name).own_memory else None
    except (OxiError, OSError):
        return None


