"""What happened to each file (the --json records) and to the batch (summary line, exit status)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oxi_cli.batch.frames import count_frames, format_frames

# ok: written; skipped: --skip-existing found the output; missing: a sequence frame not on disk;
# failed: an error; interrupted: abandoned by Ctrl-C; not_started: the batch stopped before reaching it.
STATUSES = ("ok", "skipped", "missing", "failed", "interrupted", "not_started")
EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130


@dataclass
class FileRecord:
    input: Path
    output: Path | None
    status: str = "not_started"
    frame: int | None = None
    ops: list[dict[str, Any]] = field(default_factory=list)
    backend: str | None = None
    device: str | None = None
    strategy: str | None = None
    width: int | None = None
    height: int | None = None
    out_width: int | None = None
    out_height: int | None = None
    started: float | None = None  # wall clock (time.time()), for ordering and overlap checks
    finished: float | None = None
    seconds: float | None = None
    stages: dict[str, float] = field(default_factory=dict)  # read / compute / write seconds
    estimate_bytes: int | None = None
    peak_memory_bytes: int | None = None  # the process's peak RSS when the file finished
    error: str | None = None
    error_type: str | None = None  # the oxi error class (InputError, ProcessingError...) for scripts
    exit_code: int = 0  # the error's own exit code (2 for bad input), for single-file runs
    required: bool = True  # a missing frame that counts as a failure (asked for by --frames)
    traceback: str | None = None  # shown with --debug, never in JSON

    def message(self) -> str:
        """The error naming the input (most oxi errors already do)."""
        error = self.error or "unknown error"
        return error if str(self.input) in error else f"{self.input}: {error}"

    @property
    def failed(self) -> bool:
        return self.status == "failed" or (self.status == "missing" and self.required)

    def as_json(self) -> dict[str, Any]:
        return {
            "input": str(self.input),
            "output": str(self.output) if self.output is not None else None,
            "status": self.status,
            "frame": self.frame,
            "ops": self.ops,
            "backend": self.backend,
            "device": self.device,
            "strategy": self.strategy,
            "width": self.width,
            "height": self.height,
            "out_width": self.out_width,
            "out_height": self.out_height,
            "started": self.started,
            "finished": self.finished,
            "seconds": _round(self.seconds),
            "stages": {k: _round(v) for k, v in self.stages.items()},
            "estimate_bytes": self.estimate_bytes,
            "peak_memory_bytes": self.peak_memory_bytes,
            "error": self.error,
            "error_type": self.error_type,
        }


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 6)


@dataclass
class BatchReport:
    records: list[FileRecord]
    single: bool  # one input file given as `IN OUT`: its own error and exit code, no summary
    interrupted: bool = False
    seconds: float = 0.0

    def counts(self) -> Counter[str]:
        return Counter(r.status for r in self.records)

    @property
    def failures(self) -> list[FileRecord]:
        return [r for r in self.records if r.failed]

    def return_code(self) -> int:
        """130 after Ctrl-C; a single file's own error code; 1 when any file failed; else 0."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        failures = self.failures
        if not failures:
            return EXIT_OK
        if self.single:
            return failures[0].exit_code or EXIT_FAILED
        return EXIT_FAILED

    def summary(self) -> list[str]:
        """A count line, then one line per failed or missing file."""
        c = self.counts()
        parts = [f"{c['ok']} done"]
        for status, label in (("skipped", "skipped (output exists)"), ("failed", "failed"), ("missing", "missing"),
                              ("interrupted", "interrupted"), ("not_started", "not started")):
            if c[status]:
                parts.append(f"{c[status]} {label}")
        head = f"{len(self.records)} file{'s' if len(self.records) != 1 else ''}: " + ", ".join(parts)
        lines = [f"{head} ({self.seconds:.1f} s)"]
        missing = [r.frame for r in self.records if r.status == "missing" and r.frame is not None]
        if missing:
            lines.append(f"  missing frames: {format_frames(missing)} ({count_frames(len(missing))})")
        for r in self.records:
            if r.status == "failed":
                lines.append(f"  failed: {r.message()}")
        if self.interrupted:
            lines.append("  interrupted: files in progress were abandoned; no partial outputs were left")
        elif c["not_started"]:
            lines.append("  stopped at the first failure; --continue-on-error processes the rest")
        return lines
