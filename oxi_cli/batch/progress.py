"""What a batch shows while it runs: a rich bar on a terminal, plain lines in logs, nothing with --quiet."""

from __future__ import annotations

import threading
from typing import Any, TextIO

from oxi_cli.batch.report import FileRecord


class Reporter:
    """`mode` is 'fancy' (one rich bar: files, bytes, ETA, current file), 'plain' (a line per finished file,
    for logs and pipes) or 'quiet' (errors only). A single `IN OUT` file shows a bar only when the executor
    reports progress within it (bands or tiles), and one line when done, as before batches existed.
    """

    def __init__(self, stream: TextIO, mode: str, single: bool, verbose: bool = False) -> None:
        self.stream = stream
        self.mode = mode
        self.single = single
        self.verbose = verbose  # --verbose: a line of details under each file done
        self._lock = threading.Lock()
        self._progress: Any = None
        self._task: Any = None
        self._total_files = 0
        self._done_files = 0
        self._done_bytes = 0
        self._partial: dict[int, float] = {}  # index -> bytes done within a running file
        self._current: dict[int, str] = {}

    # --- lifecycle -----------------------------------------------------------------------------------

    def begin(self, total_files: int, total_bytes: int) -> None:
        self._total_files = total_files
        self._total_bytes = max(total_bytes, 1)
        if self.mode == "fancy" and not self.single:
            self._start_bar()

    def end(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(file=self.stream, stderr=True)
        self._progress = Progress(
            TextColumn("[bold]{task.fields[files]}"),
            BarColumn(),
            DownloadColumn(binary_units=True),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.description}", markup=False),
            console=console,
            transient=self.single,
            refresh_per_second=5,
        )
        self._task = self._progress.add_task("", total=self._total_bytes, files=self._files_text())
        self._progress.start()

    def _files_text(self) -> str:
        return f"{self._done_files}/{self._total_files} files"

    def _refresh(self) -> None:
        if self._progress is None:
            return
        done = self._done_bytes + sum(self._partial.values())
        names = ", ".join(self._current.values())
        self._progress.update(self._task, completed=done, files=self._files_text(), description=names)

    # --- events (called from worker threads) -----------------------------------------------------------

    def started(self, index: int, name: str) -> None:
        with self._lock:
            self._current[index] = name
            self._partial[index] = 0.0
            self._refresh()

    def fraction(self, index: int, nbytes: int, done: int, total: int) -> None:
        """Progress inside one file (the executor's rows done out of total)."""
        with self._lock:
            if self.mode == "fancy" and self._progress is None:
                self._start_bar()  # a single large file: its bands or tiles
            self._partial[index] = nbytes * done / max(total, 1)
            self._refresh()

    def finished(self, index: int, record: FileRecord, nbytes: int) -> None:
        with self._lock:
            self._current.pop(index, None)
            self._partial.pop(index, None)
            self._done_files += 1
            self._done_bytes += nbytes
            self._refresh()
            if record.status == "failed":
                self._print(f"oxi: error: {record.message() if not self.single else record.error}")
                if record.traceback:
                    self._print(record.traceback.rstrip())
            elif self.single:
                if record.status == "ok" and self.mode == "fancy":
                    self._print(_done_line(record))
            elif self.mode == "plain" and record.status in ("ok", "skipped"):
                what = f"{record.seconds:.2f} s" if record.status == "ok" else "skipped, output exists"
                self._print(f"[{self._done_files}/{self._total_files}] {record.input} -> {record.output}: {what}")
            if self.verbose and record.status == "ok":
                self._print(_details(record))

    def message(self, line: str) -> None:
        with self._lock:
            self._print(line)

    def _print(self, line: str) -> None:
        if self._progress is not None:
            self._progress.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()


def _details(r: FileRecord) -> str:
    """--verbose's line for a file done: what a --json record holds, for a person."""
    from oxi_cli.memory import format_size

    names = ", ".join(op["op"] for op in r.ops) or "copy"
    device = f" ({r.device})" if r.device else ""
    stages = " / ".join(f"{name} {seconds:.2f} s" for name, seconds in r.stages.items())
    peak = f", peak memory {format_size(r.peak_memory_bytes)}" if r.peak_memory_bytes else ""
    return (f"  {r.input}: {r.width}x{r.height} -> {r.out_width}x{r.out_height}, {names} on {r.backend}{device}, "
            f"{r.strategy}, {stages or f'{r.seconds or 0:.2f} s'}{peak}")


def _done_line(r: FileRecord) -> str:
    names = ", ".join(op["op"] for op in r.ops) or "copy"
    return f"{r.output}: {r.out_width}x{r.out_height}, {names} on {r.backend}, {r.seconds or 0:.2f} s"
