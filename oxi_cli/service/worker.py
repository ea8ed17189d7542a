"""A service worker: runs one client's command at a time in this warm process, exactly as the client would.

The client's own standard streams (passed as descriptors), working folder, environment, umask, argv, resource
limits, nice value and CPUs (service/caller.py) are this process's for the job and restored after it, so output
bytes, terminal detection and progress bars are those of a run in the client's process. A job that was
interrupted or that died, or left limits this process cannot take back, leaves a worker that is not reused.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import signal
import socket
import sys
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

from oxi_cli.io.atomic import tell_written
from oxi_cli.service import caller, handback, protocol

STOPPED_POLL = 0.1  # seconds between looks at whether the client is stopped
FORWARDED = ("INT", "TERM", "HUP")  # the client's signals a job takes as its own process would


@dataclass
class Budget:
    """The service's memory budget seen from a worker: a file asks the dispatcher for its bytes and waits."""

    channel: socket.socket
    lock: threading.Lock = field(default_factory=threading.Lock)
    waiting: dict[int, threading.Event] = field(default_factory=dict)
    held: list[tuple[int, int]] = field(default_factory=list)  # (ticket, bytes) granted and not yet released
    counter: int = 0
    gone: bool = False  # the dispatcher closed its end

    def acquire(self, nbytes: int, cancelled: Any) -> None:
        with self.lock:
            self.counter += 1
            ticket = self.counter
            event = self.waiting[ticket] = threading.Event()
            if self.gone:
                event.set()
            else:
                with contextlib.suppress(OSError):
                    protocol.send(self.channel, {"admit": int(nbytes), "ticket": ticket})
        while not event.wait(0.1):
            if cancelled():
                with self.lock, contextlib.suppress(OSError):
                    del self.waiting[ticket]
                    protocol.send(self.channel, {"release": ticket})
                raise KeyboardInterrupt
        with self.lock:
            del self.waiting[ticket]
            self.held.append((ticket, int(nbytes)))

    def release(self, nbytes: int) -> None:
        with self.lock:
            ticket = next(t for t, n in self.held if n == int(nbytes))
            self.held.remove((ticket, int(nbytes)))
            if not self.gone:
                with contextlib.suppress(OSError):
                    protocol.send(self.channel, {"release": ticket})

    def granted(self, ticket: int) -> None:
        with self.lock:
            event = self.waiting.get(ticket)
        if event is not None:
            event.set()

    def lost(self) -> None:
        """The dispatcher is gone: nobody grants any more, so files waiting go ahead (their job finishes)."""
        with self.lock:
            self.gone = True
            for event in self.waiting.values():
                event.set()


class _ClientJob:
    """One client's job in this process: its descriptors in place of ours, its settings, and a watch on its
    connection (a Ctrl-C it forwards, or its end) that interrupts the job."""

    def __init__(self, request: dict[str, Any], fds: list[int]) -> None:
        self.request = request
        self.client = socket.socket(fileno=fds[0])
        self.stdio = fds[1:4]
        self.interrupted = threading.Event()
        self.finished = threading.Event()
        # The watcher interrupts the job only while run_command has not returned (checked and signalled under
        # `ending`): a signal forwarded as the job ends must not turn a finished job's status into 130.
        self.ending = threading.Lock()
        self.returned = False
        self.sending = threading.Lock()  # the job's threads tell the client of each file written
        self.written = 0

    def watch(self) -> None:
        """The client's SIGINT, SIGTERM or SIGHUP (a {"signal": NAME} frame) raised in the job, whose handlers are
        those of a process of its own (cli/failures.py); its disappearance, as a Ctrl-C. While the client is
        stopped (Ctrl-Z, SIGSTOP), this process stops itself: the client continues it (service/client.py)."""
        import select

        main = threading.main_thread().ident
        ending = signal.SIGINT
        try:
            while not self.finished.is_set():
                if not select.select([self.client], [], [], STOPPED_POLL)[0]:
                    if caller.stopped(self.request["caller"]["pid"]) and not self.finished.is_set():
                        os.kill(os.getpid(), signal.SIGSTOP)
                    continue
                message = protocol.recv(self.client)
                if message is None:
                    break
                if message.get("signal") in FORWARDED:
                    ending = getattr(signal, f"SIG{message['signal']}")
                    break
        except (OSError, protocol.ProtocolError):
            pass
        with self.ending:
            if not self.returned and not self.finished.is_set() and main is not None:
                self.interrupted.set()
                signal.pthread_kill(main, ending)

    def run(self) -> int | None:
        """The job's exit status, sent to the client; None when its state could not be taken on (a working
        folder that no longer exists, an unknown encoding): the client is told to run the job itself."""
        saved = _Saved()
        watcher = threading.Thread(target=self.watch, name="oxi-client-watch", daemon=True)
        code: int | None = 1
        reply: dict[str, Any] | None = None
        try:
            _enter(self.request, self.stdio)
            caller.take_on(self.request["caller"])
        except (OSError, LookupError, ValueError) as e:
            saved.restore()
            if saved.spoiled:  # limits it took on in part and cannot take back: no other job here
                self.interrupted.set()
            self._end({"refused": f"cannot take on the client's state: {e}"})
            return None
        from oxi_cli.cli.failures import ending_signal, handle_ending_signals, status_if_nothing_interrupted

        try:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            handle_ending_signals()  # as run_command sets them, before the watcher may raise one
            watcher.start()
            from oxi_cli.cli.main import run_command

            # From here the client never runs this job itself; it stops and continues this process with itself.
            self._tell({"started": os.getpid()})
            tell_written(self._wrote)
            with warnings.catch_warnings():  # filters as they were; each warning said once per job again
                code = run_command(self.request["prog"])
            with self.ending:
                self.returned = True
        except KeyboardInterrupt:  # the client's signal; once the work had ended it interrupted nothing
            settled = status_if_nothing_interrupted()
            code = 130 if settled is None else settled
        except handback.RunInOwnProcess as e:  # before it did anything: the client runs it
            code = None
            reply = {"refused": str(e)}
        except BaseException:  # --debug's re-raise, or a bug: the traceback a process of its own would print
            with contextlib.suppress(Exception):
                sys.excepthook(*sys.exc_info())
            self.interrupted.set()  # this process's state is unknown now: a fresh worker takes the next job
        finally:
            tell_written(None)
            self.finished.set()
            _leave_job()
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            saved.restore()
        if saved.spoiled:  # limits or a priority this process could not take back: no other job here
            self.interrupted.set()
        if reply is None:
            reply = {"exit": code}
            if (signum := ending_signal(code)) is not None:
                reply["signal"] = signum  # the client ends by it, as this job's own process would have
        self._end(reply)
        return code

    def _wrote(self, path: object) -> None:
        with self.sending:
            self.written += 1
            written = self.written
        self._tell({"wrote": written})

    def _tell(self, message: dict[str, Any]) -> None:
        with self.sending, contextlib.suppress(OSError):
            protocol.send(self.client, message)

    def _end(self, reply: dict[str, Any]) -> None:
        self._tell(reply)
        with contextlib.suppress(OSError):
            self.client.shutdown(socket.SHUT_WR)  # the client waits for this end, whoever else holds the connection
        self.client.close()
        for fd in self.stdio:
            with contextlib.suppress(OSError):
                os.close(fd)


class _Saved:
    """This process's own streams, folder, environment, umask, argv and SIGINT handler, put back after a job."""

    def __init__(self) -> None:
        self.fds = [os.dup(fd) for fd in (0, 1, 2)]
        self.streams = (sys.stdin, sys.stdout, sys.stderr)
        self.cwd = os.getcwd()
        self.environ = dict(os.environ)
        self.umask = os.umask(0o077)
        os.umask(self.umask)
        self.argv = list(sys.argv)
        self.handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        self.bounds = caller.of_this_process()
        self.spoiled = False

    def restore(self) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            caller.take_on(self.bounds)
        except (OSError, ValueError):
            self.spoiled = True
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        for fd, saved in zip((0, 1, 2), self.fds, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        sys.stdin, sys.stdout, sys.stderr = self.streams
        os.chdir(self.cwd)
        _replace_environ(self.environ)
        os.umask(self.umask)
        sys.argv = self.argv
        for sig, handler in self.handlers.items():
            signal.signal(sig, handler)


def _replace_environ(env: dict[str, str]) -> None:
    for name in [n for n in os.environ if n not in env]:
        del os.environ[name]
    for name, value in env.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def _enter(request: dict[str, Any], stdio: list[int]) -> None:
    """The client's descriptors on 0, 1, 2 (new text streams over them in its encodings), its folder,
    environment, umask and argv; warnings said once per job, as in a new process."""
    for fd, theirs in zip((0, 1, 2), stdio, strict=True):
        os.dup2(theirs, fd)
    encodings = request["streams"]
    sys.stdin = _text(0, "r", encodings[0])
    sys.stdout = _text(1, "w", encodings[1])
    sys.stderr = _text(2, "w", encodings[2])
    os.chdir(request["cwd"])
    _replace_environ(request["env"])
    os.umask(request["umask"])
    sys.argv = ["oxi", *request["argv"]]
    _fresh_process_state()


def _text(fd: int, mode: str, stream: dict[str, str]) -> io.TextIOWrapper:
    """A text stream over descriptor `fd` as Python would have made it in the client (line-buffered on a
    terminal, stderr always; the client's encoding and error handler)."""
    raw = io.FileIO(fd, mode, closefd=False)
    tty = raw.isatty()
    buffered = io.BufferedWriter(raw) if mode == "w" else io.BufferedReader(raw)
    return io.TextIOWrapper(buffered, encoding=stream["encoding"], errors=stream["errors"],
                            line_buffering=tty or fd == 2)


def _fresh_process_state() -> None:
    """What a command keeps for the rest of its process and a new job must not inherit."""
    from oxi_cli import bytecode, execute, kernel_cache
    from oxi_cli.io import atomic

    execute.reset_warnings()
    atomic.job_started()
    # Caches judged again for each job, as a process of its own judges them when it opens them (trust.py).
    kernel_cache.location.cache_clear()
    bytecode.recheck()


def _leave_job() -> None:
    """What the job left for its process's end (the compile of kernels it found cold) starts before its client is
    answered, in the job's environment, as its own process would start it on exit: this worker may end by
    os._exit or with its service, and the compile, in a session of its own, outlives both without holding up
    the next job."""
    from oxi_cli import leaving

    leaving.run()


def _devices() -> list[str]:
    from oxi_cli.backends.select import held_devices

    return held_devices()


def _hold_devices() -> None:
    """Between jobs, open the device `auto` would use (in the background), so the next jobs find it warm and weigh
    it so: only a long-lived process gains from holding it (the one-shot command opens it only when a job
    chooses it), and the dispatcher asks one worker at a time to. Idle workers exit after a minute, closing it
    (server.WORKER_IDLE)."""
    from oxi_cli.backends.select import hold_device

    hold_device()


def serve(channel: socket.socket) -> None:
    """The worker's life: jobs from the dispatcher one at a time, until it says stop or a job leaves this
    process unfit for another (then the dispatcher starts a fresh worker)."""
    from oxi_cli.batch import schedule

    handback.in_worker()
    budget = Budget(channel)
    schedule.share_budget(budget)
    jobs: queue.Queue[tuple[dict[str, Any], list[int]] | None] = queue.Queue()  # (the dispatcher's message, fds)

    def listen() -> None:
        try:
            while True:
                reader = protocol.Reader(channel)
                try:
                    message = reader.read()
                except EOFError:
                    break
                fds = reader.fds
                if message.get("stop"):
                    break
                if "admitted" in message:
                    budget.granted(int(message["admitted"]))
                elif "job" in message:
                    jobs.put((message, fds))
        except (OSError, protocol.ProtocolError):
            pass
        budget.lost()
        jobs.put(None)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only a job's own client interrupts this process
    threading.Thread(target=listen, name="oxi-dispatcher-link", daemon=True).start()
    while (item := jobs.get()) is not None:
        message, fds = item
        job = _ClientJob(message["job"], fds)
        handed_back = job.run() is None
        reusable = not job.interrupted.is_set()
        if reusable and message.get("hold_device"):
            _hold_devices()
        with contextlib.suppress(OSError):
            protocol.send(channel, {"done": True, "reusable": reusable, "devices": _devices(),
                                    "handed_back": handed_back})
        if not reusable:
            break
    os._exit(0)
