"""`oxi worker SCHEDULER`: a Dask worker with oxi's preload, for batches sent with `--cluster tcp://...`."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

WORKER_EPILOG = """\b
Examples:
  dask scheduler                                   # on one machine: prints tcp://HOST:8786
  oxi worker tcp://HOST:8786                       # on each render node
  oxi worker tcp://HOST:8786 --nthreads 4 --memory-budget 24G
  oxi run 'plate.####.exr' -o 'out/plate.####.exr' --cdl look.cc --cluster tcp://HOST:8786
Equivalent: DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False \\
  dask worker tcp://HOST:8786 --preload oxi_cli.batch.cluster --nthreads 2
"""


# Dask's profiler and GIL monitor off (see batch/cluster.py QUIET_WORKERS), unless the environment says otherwise.
WORKER_ENV = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
              "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__GIL__ENABLED": "False"}


def worker(
    scheduler: Annotated[str, typer.Argument(help="The Dask scheduler's address, e.g. tcp://farm01:8786.")],
    nthreads: Annotated[
        int, typer.Option("--nthreads", min=1, help="Files in flight in this worker (they share its backend).")
    ] = 2,
    nworkers: Annotated[int, typer.Option("--nworkers", min=1, help="Worker processes on this machine.")] = 1,
    memory_budget: Annotated[
        str | None,
        typer.Option("--memory-budget", help="Memory this worker's files may use together, e.g. 24G (advertised "
                     "as its MEMORY resource). Default: half of its share of the memory.", show_default=False),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="The worker's name.", show_default=False)] = None,
) -> None:
    """Start a Dask worker for oxi batches: the backend opens once and stays warm; memory and GPU are advertised."""
    from oxi_cli.cli.common import reporting
    from oxi_cli.service.handback import own_process

    own_process("oxi worker")  # it becomes a Dask worker: hours long, and a process of its own (execv)
    with reporting(False):
        cmd = worker_command(scheduler, nthreads, nworkers, memory_budget, name)
        os.execve(sys.executable, cmd, {**WORKER_ENV, **os.environ})  # the worker's, not ours to change


def worker_command(
    scheduler: str, nthreads: int, nworkers: int, memory_budget: str | None, name: str | None
) -> list[str]:
    """`python -m distributed.cli.dask_worker ...` with oxi's preload; checks the cluster extra first."""
    import importlib.util

    from oxi_cli.errors import UsageError
    from oxi_cli.memory import parse_bytes

    if importlib.util.find_spec("distributed") is None:
        raise UsageError("oxi worker needs Dask: pip install 'oxi[cluster]' (dask and distributed)")
    from oxi_cli.batch.cluster import parse_address

    address = parse_address(scheduler).address
    if address is None:
        raise UsageError("oxi worker joins a running scheduler (tcp://host:8786); `local` needs no workers")
    cmd = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--preload", "oxi_cli.batch.cluster",
           "--nthreads", str(nthreads), "--nworkers", str(nworkers)]
    if memory_budget is not None:
        cmd += ["--resources", f"MEMORY={parse_bytes(memory_budget, '--memory-budget')}"]
    if name is not None:
        cmd += ["--name", name]
    return cmd
