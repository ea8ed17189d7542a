"""One batch's files as jobs: each input's output checked before any work, and one file processed end to end."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oxi_cli.batch.inputs import InputItem, Inputs
from oxi_cli.batch.naming import OutputTarget, output_path, refuse_replacing, refuse_unwritable
from oxi_cli.batch.options import BatchOptions
from oxi_cli.batch.report import FileRecord
from oxi_cli.batch.schedule import Footprint
from oxi_cli.errors import InputError, UsageError
from oxi_cli.stream import RowsDone


@dataclass
class Job:
    index: int
    item: InputItem
    output: Path
    record: FileRecord
    nbytes: int = 0
    ops: list[Any] = field(default_factory=list)
    footprint: Footprint | None = None
    plan: Any = None
    thread: threading.Thread | None = None
    backend: Any = None  # the raw backend this file runs on (a trial hands out each candidate); None: the batch's
    slot: int | None = None  # its place in the trial, if any
    codec: str | None = None  # --compression / --quality for its output's format, checked once (plan_jobs)


def process_file(job: Job, backend: Any, opts: BatchOptions, progress: RowsDone) -> Any:
    """Process one file end to end as its plan says and return the executor's Result.

    `progress` (rows done, rows total) raises KeyboardInterrupt once the batch is cancelled, which lets a
    streamed file stop between bands.
    """
    from oxi_cli.stream import execute_planned

    refuse_beyond_memory(job)
    return execute_planned(
        job.ops,
        job.item.path,
        job.output,
        backend,
        job.plan,
        out_type=opts.out_type or "same",
        codec=job.codec,
        in_place=opts.in_place,
        progress=progress,
        selection=opts.selection(),
    )


def refuse_beyond_memory(job: Job) -> None:
    """A file over its memory budget still runs, alone (batch/schedule.py); one that needs more than this machine,
    or this process's limit, can give is refused before it is decoded, rather than failing out of memory."""
    from oxi_cli.memory import format_size, memory_headroom

    plan = job.plan
    if plan is None or plan.fits:
        return
    have, bound = memory_headroom()
    if plan.ram_bytes > have:
        raise InputError(
            f"{job.item.path}: processing this {plan.width}x{plan.height} image needs {format_size(plan.ram_bytes)} "
            f"of memory, but {format_size(have)} is {bound}; free memory or use a machine with more"
        )


def plan_jobs(inputs: Inputs, target: OutputTarget, chain: Any, opts: BatchOptions) -> list[Job]:
    """One job per input with its output path and codec; refuses clashes, settings its output's format cannot
    take and overwriting inputs before any work."""
    from oxi_cli.io import output_codec
    from oxi_cli.io.common import output_format

    jobs: list[Job] = []
    claimed: dict[str, Path] = {}
    codecs: dict[str, str | None] = {}  # by output format: a batch may write several
    for index, item in enumerate(inputs.items):
        out = output_path(target, item)
        key = os.path.normcase(os.path.abspath(out))
        if key in claimed:
            raise UsageError(
                f"{claimed[key]} and {item.path} would both be written to {out}; "
                "use --name with {parent} or {stem}, or a sequence pattern"
            )
        claimed[key] = item.path
        out_format = output_format(out, None if item.missing else item.path, opts.in_place)
        check_out_type(opts.out_type, out_format)
        if out_format not in codecs:
            codecs[out_format] = output_codec(out_format, opts.compression, opts.quality)
        record = FileRecord(item.path, out, frame=item.frame, required=item.required)
        jobs.append(Job(index, item, out, record, codec=codecs[out_format]))
    if not opts.skip_existing and not opts.plan_only:  # skipped outputs stay; a plan writes nothing
        refuse_replacing([(job.item, job.output) for job in jobs], opts.overwrite)
    if not opts.plan_only:
        refuse_unwritable([job.output for job in jobs if not job.item.missing], create_folders=target.kind != "file")
    return jobs


def check_out_type(out_type: str | None, out_format: str) -> None:
    """An --out-type the output format cannot store is refused before any work (an unknown name is
    execute.output_types' to refuse), so its error comes alone, never after a file was computed."""
    from oxi_cli.execute import OUT_TYPES
    from oxi_cli.io.formats import named

    allowed = named(out_format).stores
    if out_type in (None, "same") or out_type not in OUT_TYPES or out_type in allowed:
        return
    usable = [t for t in allowed if t in OUT_TYPES]
    raise UsageError(
        f"{out_format.upper()} outputs store {_either(allowed)}, not {out_type}; use --out-type {_either(usable)}"
    )


def _either(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


# What any Vulkan device can hold for one piece of a plan (wgpu's default buffer limit is 256 MiB; every GPU
# oxi can open has several times more).
