"""The service's dispatcher: accepts this user's clients, hands each job to a warm worker it forked, admits the
workers' files against one memory budget, and exits when idle.

One thread and no job of its own: a worker forked from here starts with every import done, and a crashing job
takes only its worker down. Workers run one job at a time; a busy service forks more, up to MAX_WORKERS.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import selectors
import signal
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oxi_cli.host import cores
from oxi_cli.service import caller, paths, protocol

SERVICE_IDLE = 900.0  # seconds without a job before the service exits (OXI_SERVER_IDLE overrides)
WORKER_IDLE = 60.0  # an idle worker beyond the first exits after this long, closing the GPU it holds
FIRST_FRAME_SECONDS = 5.0  # a client sends its request at once; one whose request is not whole by then is dropped
MAX_PENDING = 256  # connections whose request is still coming in; more are closed as they come
# Imported before any worker is forked, so every job starts warm. Nothing here may start a thread: a forked
# child has only the thread that forked, and a library whose pool threads vanished would wait for them forever
# (OpenEXR's pool starts when oxi_cli.io.exr is imported, so each worker imports that itself).
PRELOAD = (
    "numpy", "oxi_cli.cli.main", "oxi_cli.cli.common", "oxi_cli.batch.runner", "oxi_cli.stream", "oxi_cli.plan",
    "oxi_cli.jit", "oxi_cli.backends.select", "oxi_cli.backends.cpu.backend", "oxi_cli.backends.cpu.kernels.color",
    "OpenEXR", "imagecodecs", "tifffile", "rich.progress", "rich.console",
)


class Unmatched(Exception):
    """A job this service cannot run as its caller's own process would (service/caller.py says why)."""


def max_workers() -> int:
    return max(4, 2 * cores())


@dataclass
class Pending:
    """A client's connection whose first frame is still coming in (read as it comes: no client holds up another)."""

    conn: socket.socket
    reader: protocol.Reader
    deadline: float


@dataclass
class Worker:
    pid: int
    channel: socket.socket
    busy: bool = False
    idle_since: float = field(default_factory=time.monotonic)
    jobs: int = 0
    tickets: dict[int, tuple[int, bool]] = field(default_factory=dict)  # ticket -> (bytes, granted)
    devices: list[str] = field(default_factory=list)  # GPUs it holds open, as it said after its last job
    client: int = 0  # the pid of the client whose job it runs


def log(message: str) -> None:
    """One timestamped line in the service log (this process's stderr is the log file)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} [{os.getpid()}] {message}", file=sys.stderr, flush=True)


class Dispatcher:
    def __init__(self, folder: str, key: str, lock_fd: int) -> None:
        self.folder, self.key, self.lock_fd = folder, key, lock_fd
        self.started = time.time()
        self.idle_since = time.monotonic()
        self.jobs_served = 0
        self.jobs_handed_back = 0
        self.stopping = False
        self.workers: dict[int, Worker] = {}
        self.queue: deque[tuple[dict[str, Any], list[int], socket.socket]] = deque()
        self.pending: dict[int, Pending] = {}  # by the connection's descriptor
        self.waiting: deque[tuple[Worker, int]] = deque()  # admissions waiting for memory, in order
        # One worker keeps the GPU open between jobs: a device per worker would cost every worker a second of
        # driver start (serialised in the driver when many start at once) and device memory each.
        self.device_holder: int | None = None
        self.budget = _budget()
        self.idle_limit = float(os.environ.get("OXI_SERVER_IDLE") or SERVICE_IDLE)
        self.sel = selectors.DefaultSelector()
        self.path = paths.socket_path(folder, key)
        self.lock_path = paths.lock_path(folder, key)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    # -- life -------------------------------------------------------------------------------------------------

    def listen(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # a socket left by a service that crashed: we hold the lock, so it is ours
        old = os.umask(0o177)
        try:
            self.listener.bind(self.path)
        finally:
            os.umask(old)
        self.inode = os.stat(self.path).st_ino  # ours to remove at exit, unless a later service replaced it
        self.listener.listen(128)
        self.listener.setblocking(False)
        self.sel.register(self.listener, selectors.EVENT_READ, ("accept", None))
        signal.signal(signal.SIGTERM, lambda *_: self._stop("SIGTERM"))
        from oxi_cli.service.watch import Watch

        self.watch = Watch()  # after the preload: every file imported so far is watched
        if self.watch.fileno() is not None:
            self.sel.register(self.watch.fileno(), selectors.EVENT_READ, ("watch", None))
        self._fork()  # one warm worker waits before the first client comes
        log(f"listening on {self.path} (budget {self.budget >> 20} MiB, up to {max_workers()} workers)")

    def serve_forever(self) -> None:
        try:
            while not self._done():
                # A change to the code is read before any request that came with it (watch.py).
                events = sorted(self.sel.select(timeout=self._wait()), key=lambda event: event[0].data[0] != "watch")
                for key, _ in events:
                    kind, item = key.data
                    if kind == "watch":
                        self._changed()
                    elif kind == "accept":
                        self._accept()
                    elif kind == "client":
                        self._client(item)
                    else:
                        self._from_worker(item)
                self._drop_late()
                if self.watch.fileno() is None:
                    self._changed()
                self._reap()
                self._unstop()
                self._dispatch()
                self._expire()
        finally:
            self._close()

    def _done(self) -> bool:
        """Stopped, and every client that came before the stop has its job finished."""
        return self.stopping and not self.pending and not self.queue and not any(
            w.busy for w in self.workers.values())

    def _wait(self) -> float:
        """Until the next connection's deadline, at most a second (workers are reaped and expired each turn)."""
        soonest = min((p.deadline for p in self.pending.values()), default=time.monotonic() + 1.0)
        return min(1.0, max(0.0, soonest - time.monotonic()))

    def _close(self) -> None:
        self._unlisten()
        for worker in self.workers.values():
            with contextlib.suppress(OSError):
                protocol.send(worker.channel, {"stop": True})
            worker.channel.close()
        log(f"stopped after {self.jobs_served} jobs")

    def _unlisten(self) -> None:
        """Close the listener and remove its socket and lock at once: the next client finds no service and runs
        its job itself (or starts a new service) instead of waiting for this one to finish its jobs."""
        if self.listener.fileno() < 0:
            return
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.sel.unregister(self.listener)
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.inode:  # not a later service's
                os.unlink(self.path)
        self.listener.close()
        with contextlib.suppress(OSError):
            if os.stat(self.lock_path).st_ino == os.fstat(self.lock_fd).st_ino:
                os.unlink(self.lock_path)  # a later service makes its own
        os.close(self.lock_fd)
        self.lock_fd = -1

    def _changed(self) -> None:
        """Code the service runs changed on disk: no new job here (the next call starts a service of the new
        code); running jobs finish."""
        path = self.watch.changed()
        if path:
            self._stop(f"{path} changed")

    def _stop(self, why: str) -> None:
        if not self.stopping:
            log(f"stopping: {why}")
        self.stopping = True
        self._unlisten()

    # -- clients ----------------------------------------------------------------------------------------------

    def _accept(self) -> None:
        """Every connection waiting: this user's are read as their bytes come, until their deadline."""
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # none left (or out of descriptors: the next turn tries again)
                return
            uid = protocol.peer_uid(conn)
            if uid != os.getuid():
                log(f"refused a connection from uid {uid}")
                conn.close()
            elif len(self.pending) >= MAX_PENDING:
                log(f"refused a connection: {MAX_PENDING} others are still sending their requests")
                conn.close()
            else:
                conn.setblocking(False)
                pending = Pending(conn, protocol.Reader(conn), time.monotonic() + FIRST_FRAME_SECONDS)
                self.pending[conn.fileno()] = pending
                self.sel.register(conn, selectors.EVENT_READ, ("client", pending))

    def _client(self, pending: Pending) -> None:
        """What a client's connection has sent so far; its request once it is whole."""
        try:
            message = pending.reader.read()
        except EOFError:
            self._forget(pending)
            pending.conn.close()
            return
        except (OSError, protocol.ProtocolError) as e:
            self._refuse(pending, e)
            return
        if message is not None:
            self._forget(pending)
            self._request(pending, message)

    def _forget(self, pending: Pending) -> None:
        self.pending.pop(pending.conn.fileno(), None)
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(pending.conn)

    def _drop_late(self) -> None:
        now = time.monotonic()
        for pending in [p for p in self.pending.values() if p.deadline <= now]:
            self._refuse(pending, f"no whole request within {FIRST_FRAME_SECONDS:.0f} s")

    def _refuse(self, pending: Pending, why: object) -> None:
        log(f"refused a request: {why}")
        self._forget(pending)
        pending.reader.close_fds()
        with contextlib.suppress(OSError, protocol.ProtocolError):
            protocol.send(pending.conn, {"refused": str(why)})  # non-blocking: a reply that does not fit is lost
        pending.conn.close()

    def _request(self, pending: Pending, message: dict[str, Any]) -> None:
        """A whole first frame: a status or stop is answered at once, a job is queued for a worker. Descriptors
        the request does not use are closed."""
        fds, pending.reader.fds = pending.reader.fds, []
        try:
            op = message.get("op")
            if op == "run":
                if self.stopping:
                    raise protocol.ProtocolError("the service is stopping")
                request = protocol.job_request(message)
                if request["key"] != self.key or len(fds) != 3:
                    raise protocol.ProtocolError("not a request for this service's build")
                groups = caller.peer_groups(pending.conn)
                if (why := caller.refusal(request["argv"], request["caller"], groups)) is not None:
                    raise Unmatched(f"the caller's {why}; it runs its job itself")
                pending.conn.setblocking(True)  # the worker reads it so (the flag is the connection's, not ours)
                self.queue.append((request, fds, pending.conn))
                self.idle_since = time.monotonic()
                return
            for fd in fds:
                os.close(fd)
            fds = []
            if op == "status":
                protocol.send(pending.conn, {"status": self.status()})
            elif op == "stop":
                protocol.send(pending.conn, {"stopping": True})
                self._stop("asked by `oxi server stop`")
            else:
                raise protocol.ProtocolError(f"unknown op {op!r}")
        except (OSError, ValueError, protocol.ProtocolError, Unmatched) as e:
            pending.reader.fds = fds
            self._refuse(pending, e)
            return
        pending.conn.close()

    # -- workers ----------------------------------------------------------------------------------------------

    def _fork(self) -> Worker:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # the worker: nothing of the dispatcher's but the imports
            try:
                ours.close()
                if self.lock_fd >= 0:
                    os.close(self.lock_fd)  # the lock is the dispatcher's life, not a worker's
                self.listener.close()
                self.watch.close()
                self._drop_clients()
                self.sel.close()  # closes only this process's handle: the dispatcher's registrations stay
                for worker in self.workers.values():
                    worker.channel.close()
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                from oxi_cli.service.worker import serve

                serve(theirs)
            finally:
                os._exit(0)
        theirs.close()
        worker = Worker(pid, ours)
        self.workers[pid] = worker
        self.sel.register(ours, selectors.EVENT_READ, ("worker", worker))
        return worker

    def _drop_clients(self) -> None:
        """In a new worker: close its copies of the clients' connections and streams that the dispatcher held
        at the fork. A copy left open keeps a client's stdout pipe from reaching end-of-file until this worker
        exits: a caller reading the pipe to its end (`$(oxi ...)`, subprocess.run) waited out the worker's idle
        minute."""
        for _request, fds, conn in self.queue:
            conn.close()
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        for pending in self.pending.values():
            pending.conn.close()
            pending.reader.close_fds()

    def _dispatch(self) -> None:
        while self.queue:
            idle = [w for w in self.workers.values() if not w.busy]
            if idle:
                worker = max(idle, key=lambda w: w.idle_since)  # the warmest: its caches and device are freshest
            elif len(self.workers) < max_workers():
                worker = self._fork()
            else:
                return
            request, fds, conn = self.queue.popleft()
            running = sum(w.busy for w in self.workers.values()) + 1
            if self.device_holder not in self.workers:
                self.device_holder = worker.pid
            job = {"job": request, "running": running, "hold_device": worker.pid == self.device_holder}
            try:
                protocol.send(worker.channel, job, fds=[conn.fileno(), *fds])
                worker.busy = True
                worker.client = request["caller"]["pid"]
                worker.jobs += 1
                self.jobs_served += 1
            except OSError as e:
                log(f"worker {worker.pid} is gone ({e}); the client runs its job itself (no worker started it)")
                self._lost(worker)
            finally:
                conn.close()
                for fd in fds:
                    os.close(fd)

    def _from_worker(self, worker: Worker) -> None:
        try:
            message = protocol.recv(worker.channel)
        except (OSError, protocol.ProtocolError):
            message = None
        if message is None:
            self._lost(worker)
            return
        if "admit" in message:
            worker.tickets[int(message["ticket"])] = (int(message["admit"]), False)
            self.waiting.append((worker, int(message["ticket"])))
        elif "release" in message:
            worker.tickets.pop(int(message["release"]), None)
        elif "done" in message:
            worker.busy = False
            worker.devices = [str(d) for d in message.get("devices", [])][:8]
            worker.idle_since = self.idle_since = time.monotonic()
            worker.tickets.clear()
            self.jobs_handed_back += bool(message.get("handed_back"))
            if not message.get("reusable", False):
                self._retire(worker)
        self._admit()

    def _admit(self) -> None:
        """Grant waiting files in order while the granted ones fit the budget (a file alone always runs)."""
        while self.waiting:
            worker, ticket = self.waiting[0]
            if worker.pid not in self.workers or ticket not in worker.tickets:
                self.waiting.popleft()
                continue
            nbytes = worker.tickets[ticket][0]
            in_use = self.in_use()
            if in_use and in_use + nbytes > self.budget:
                return
            self.waiting.popleft()
            worker.tickets[ticket] = (nbytes, True)
            with contextlib.suppress(OSError):
                protocol.send(worker.channel, {"admitted": ticket})

    def in_use(self) -> int:
        return sum(n for w in self.workers.values() for n, granted in w.tickets.values() if granted)

    def _retire(self, worker: Worker) -> None:
        with contextlib.suppress(OSError):
            protocol.send(worker.channel, {"stop": True})
        self._lost(worker)

    def _lost(self, worker: Worker) -> None:
        if self.workers.pop(worker.pid, None) is None:
            return
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(worker.channel)
        worker.channel.close()
        self._admit()

    def _unstop(self) -> None:
        """A worker stops itself while its client is stopped (service/worker.py) and the client continues it; one
        whose client is no longer stopped (killed while stopped, say) is continued here, to see to its job."""
        for worker in self.workers.values():
            if worker.busy and caller.stopped(worker.pid) and not caller.stopped(worker.client):
                with contextlib.suppress(OSError):
                    os.kill(worker.pid, signal.SIGCONT)

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            worker = self.workers.get(pid)
            if worker is not None:
                if worker.busy:
                    log(f"worker {pid} died during a job ({_status(status)}); its client says so")
                self._lost(worker)

    def _expire(self) -> None:
        """Idle workers exit after WORKER_IDLE, closing what they hold (a GPU device among it); when none is
        left a fresh one is forked, so the next job still starts warm. The service exits after its idle limit."""
        now = time.monotonic()
        for worker in [w for w in self.workers.values() if not w.busy and w.jobs]:
            if now - worker.idle_since > WORKER_IDLE:
                self._retire(worker)
        if not self.workers and not self.stopping:
            self._fork()
        busy = any(w.busy for w in self.workers.values())
        if not self.queue and not busy and now - self.idle_since > self.idle_limit:
            self._stop(f"idle for {self.idle_limit:.0f} s")

    # -- status -----------------------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        from oxi_cli import __version__

        workers = {str(pid): _rss(pid) for pid in self.workers}
        own = _rss(os.getpid())
        return {
            "pid": os.getpid(),
            "version": __version__,
            "key": self.key,
            "socket": self.path,
            "uptime_seconds": round(time.time() - self.started, 1),
            "idle_seconds": 0.0 if any(w.busy for w in self.workers.values()) else round(
                time.monotonic() - self.idle_since, 1),
            "jobs_served": self.jobs_served,  # every job a worker took, the handed back ones included
            "jobs_handed_back": self.jobs_handed_back,  # run by their clients: refused state, --cluster, oxi worker
            "jobs_running": sum(w.busy for w in self.workers.values()),
            "jobs_queued": len(self.queue),
            "busy_worker_pids": [w.pid for w in self.workers.values() if w.busy],
            "workers": len(self.workers),
            "devices": sorted({d for w in self.workers.values() for d in w.devices}),
            "memory_bytes": own + sum(workers.values()),
            # By process: a worker forked while another finishes adds its size to the sum, not a leak.
            "dispatcher_memory_bytes": own,
            "worker_memory_bytes": workers,
            "budget_bytes": self.budget,
            "budget_in_use_bytes": self.in_use(),
            "files_waiting": sum(1 for w, t in self.waiting if t in w.tickets and not w.tickets[t][1]),
            "idle_exit_seconds": self.idle_limit,
            "log": paths.log_path(),
        }


def _budget() -> int:
    """OXI_SERVER_BUDGET (a size such as 24G), else what a batch's --jobs would share (OXI_MEMORY_BUDGET, else
    half the memory available now)."""
    from oxi_cli.batch.schedule import memory_budget
    from oxi_cli.memory import parse_bytes

    given = os.environ.get("OXI_SERVER_BUDGET")
    return parse_bytes(given, "OXI_SERVER_BUDGET") if given else memory_budget(None)


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.WEXITSTATUS(status)}"


def preload() -> None:
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception as e:  # an optional library missing: its jobs import it (and report) themselves
            log(f"preload of {name} failed: {type(e).__name__}: {e}")
    from oxi_cli.cli.main import click_command

    click_command()  # Typer's command tree, built once for every worker
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads > 1:
        log(f"warning: {threads} threads after preloading; forked workers may hang")


def main(argv: list[str]) -> int:
    """`python -m oxi_cli.service.server FOLDER KEY`: run the service until it is stopped or idle."""
    folder, key = argv[0], argv[1]
    if paths.runtime_dir() != folder or paths.build_key() != key:
        log("refusing to start: the runtime folder or the build differs from the client's")
        return 2
    lock_fd = os.open(paths.lock_path(folder, key), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(lock_fd).st_ino != os.stat(paths.lock_path(folder, key)).st_ino:
            raise OSError("the lock file was removed by a service stopping")
    except OSError:
        return 0  # another service of this build is starting, running or stopping: the client runs its job
    os.set_inheritable(lock_fd, False)
    from oxi_cli.bytecode import use_own_cache

    use_own_cache()  # before numpy and Numba load, as the command does (oxi_cli/bytecode.py)
    preload()
    dispatcher = Dispatcher(folder, key, lock_fd)
    dispatcher.listen()
    dispatcher.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
