"""`oxi server start|stop|status`: the warm per-user service that `oxi` hands its jobs to."""

from __future__ import annotations

import json
from typing import Annotated

import typer

SERVER_EPILOG = """\b
Examples:
  oxi server status
  oxi server start                 # e.g. in a farm task's set-up, before many short oxi calls
  oxi server stop
  OXI_SERVER=off oxi cdl a.exr b.exr --slope 1.1    # this call in its own process
\b
OXI_SERVER: auto (default) uses a running service and, from a terminal, starts one after the first call; on
always uses one, starting it and waiting if needed; off never does. CI (CI set) and scripts without a terminal
never start one themselves. The service exits after 15 minutes without a job (OXI_SERVER_IDLE seconds); its
workers close the GPU after a minute idle. Log: ~/.cache/oxi/service.log, used only where nobody else
could change it.
"""


def server(
    action: Annotated[str, typer.Argument(help="start, stop or status.", show_default=False)],
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Start, stop or describe the warm oxi service (imports, kernels and GPU kept between calls)."""
    from oxi_cli.cli.common import reporting
    from oxi_cli.errors import UsageError
    from oxi_cli.service import control

    with reporting(False):
        if action == "start":
            found = control.start()
            if not found["running"]:
                raise UsageError(f"the oxi service did not start: {found.get('reason') or 'see the service log'}")
        elif action == "stop":
            found = {"stopped": control.stop()}
        elif action == "status":
            found = control.status()
        else:
            raise UsageError(f"oxi server takes start, stop or status, not {action!r}")
    if json_output:
        typer.echo(json.dumps(found))
    elif action == "stop":
        typer.echo(f"stopped {found['stopped']} oxi service{'s' if found['stopped'] != 1 else ''}")
    else:
        typer.echo(describe(found))


def describe(found: dict) -> str:
    log = (f"  log {found['log']} is not used ({found['log_refused']}): the service writes to the terminal that "
           "started it, if any" if found.get("log_refused") else f"  log {found.get('log')}")
    if not found["running"]:
        why = found.get("reason") or found.get("unanswered") or f"OXI_SERVER={found.get('mode', 'auto')}"
        return f"oxi service: not running ({why})" + (f"\n{log}" if found.get("log_refused") else "")
    mib = 1 << 20
    lines = [
        f"oxi service: running, pid {found['pid']}, up {_duration(found['uptime_seconds'])}, "
        f"{found['jobs_served']} jobs served ({found['jobs_running']} running)",
        f"  devices {', '.join(found['devices']) or 'the CPU only (no GPU held)'}",
        f"  workers {found['workers']}, memory {found['memory_bytes'] / mib:.0f} MiB, budget "
        f"{found['budget_in_use_bytes'] / mib:.0f} of {found['budget_bytes'] / mib:.0f} MiB in use",
        f"  idle {_duration(found['idle_seconds'])} (exits after {_duration(found['idle_exit_seconds'])} idle)",
        f"  socket {found['socket']}",
        log,
    ]
    if found.get("other_builds"):
        lines.append(f"  {found['other_builds']} service(s) of other oxi builds also run (`oxi server stop` ends all)")
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
