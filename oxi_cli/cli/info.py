"""`oxi info`: print what image files hold (rich text or one JSON record per file)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from oxi_cli.cli.common import FramesOpt, RecursiveOpt

INFO_EPILOG = """\b
Examples:
  oxi info plate.exr
  oxi info plate.exr --stats                  # min, max, mean, NaN and Inf per channel
  oxi info shots/ --json | jq '.channels'
  oxi info 'plate.####.exr' --frames 1001-1010 --stats --json
  oxi info review.mov                         # codec, size, frames, rate, timecode, colour tags
\b
--stats reads EXR, PNG and TIFF files in bands of rows, so memory stays bounded for any image size. Min, max and mean
cover finite values; NaN and infinities are counted apart. 8/16-bit values are shown as 0..1, as oxi
processes them.
"""


def info(
    paths: Annotated[
        list[str],
        typer.Argument(help="Image files, folders, globs or sequences.", show_default=False, metavar="FILES"),
    ],
    stats: Annotated[bool, typer.Option("--stats", help="Per-channel min, max, mean, NaN and Inf counts.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="One JSON record per file on stdout.")] = False,
    recursive: RecursiveOpt = False,
    frames: FramesOpt = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show Python tracebacks on errors.")] = False,
) -> None:
    """Show an image's size, channels and pixel types, compression, tiling, windows and attributes (a movie's
    codec, size, frames, rate, timecode and colour tags)."""
    from oxi_cli.batch.inputs import expand_inputs
    from oxi_cli.cli.common import reporting
    from oxi_cli.errors import OxiError

    with reporting(debug):
        items = expand_inputs(paths, frames=frames, recursive=recursive)
    code = 0
    console = None
    missing: list[int] = []
    for item in items.items:
        if item.missing:
            # Said once at the end, as a compact range list, like a batch's summary.
            missing.append(item.frame if item.frame is not None else 0)
            code = max(code, 1)
            if json_output:
                print(json.dumps({"path": str(item.path), "error": "frame not on disk"}), flush=True)
            continue
        from oxi_cli.info import channel_stats, describe

        try:
            doc: dict[str, Any] = describe(item.path)
            if stats:
                per_part = channel_stats(item.path)
                doc["stats"] = per_part[0]
                for part, part_stats in zip(doc.get("parts", []), per_part, strict=False):
                    part["stats"] = part_stats
            doc["error"] = None
        except Exception as e:  # one file's failure is reported; the others are still shown
            if debug:
                raise
            message = str(e) if isinstance(e, OxiError) else f"{type(e).__name__}: {e}"
            doc = {"path": str(item.path), "error": message}
            code = max(code, e.exit_code if isinstance(e, OxiError) else 1)
        if json_output:
            print(json.dumps(doc), flush=True)
            if doc["error"]:
                typer.echo(f"oxi: error: {_message(doc)}", err=True)
            continue
        if doc["error"]:
            typer.echo(f"oxi: error: {_message(doc)}", err=True)
            continue
        if console is None:
            console = _console()
        _print(console, doc)
    if missing:
        from oxi_cli.batch.frames import count_frames, format_frames

        typer.echo(f"oxi: error: missing frames: {format_frames(missing)} ({count_frames(len(missing))})", err=True)
    if code:
        from oxi_cli.cli.failures import finished

        raise finished(code)


def _console() -> Any:
    """A rich console whose closed stdout (`oxi info ... | head`) ends oxi quietly through the entry point
    (rich's own handling exits 1)."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError(32, "stdout closed")

    return PipeConsole(highlight=False)


def _message(doc: dict[str, Any]) -> str:
    return doc["error"] if doc["path"] in doc["error"] else f"{doc['path']}: {doc['error']}"


def _print(console: Any, doc: dict[str, Any]) -> None:
    if "codec" in doc:
        _print_movie(console, doc)
        return
    parts = doc.get("parts") or [doc]
    kind = doc["format"].upper()
    if len(parts) > 1:
        kind += f", {len(parts)} parts"
    console.print(f"[bold]{doc['path']}[/]  [dim]{kind}, {_bytes(doc['file_bytes'])}[/]")
    for part in parts:
        if len(parts) > 1:
            view = f" (view {part['view']})" if part.get("view") else ""
            console.print(f"[bold]part {part['index']}[/] {part.get('name') or ''}{view}")
        _print_part(console, part)
    console.print()


def _print_movie(console: Any, doc: dict[str, Any]) -> None:
    """A movie (io/movie.describe): codec, size, frames, rate, timecode and colour tags."""
    from rich.table import Table

    console.print(f"[bold]{doc['path']}[/]  [dim]{doc['format'].upper()} movie, {_bytes(doc['file_bytes'])}[/]")
    colour = doc["colour"]
    rows = [
        ("codec", f"{doc['codec']} ({doc['pix_fmt']})"),
        ("size", f"{doc['width']} x {doc['height']}"),
        ("frames", str(doc["frames"])),
        ("rate", f"{doc['fps_decimal']:g} fps ({doc['fps']})" if doc["fps"] else "not stated"),
        ("timecode", doc["timecode"] or "not stated"),
        ("colour", f"primaries {colour['primaries']}, transfer {colour['transfer']}, matrix {colour['matrix']}, "
                   f"range {colour['range']}" + (f": {colour['display']}" if colour["display"] else "")),
    ]
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim")
    grid.add_column(overflow="fold")
    for label, value in rows:
        grid.add_row(label, value)
    console.print(grid, markup=False)
    console.print()


def _print_part(console: Any, doc: dict[str, Any]) -> None:
    from rich.table import Table

    kind = ""
    if doc.get("storage") == "tiled":
        t = doc["tiles"]
        kind = f"tiled {t['width']}x{t['height']} ({t['levels']}), "
    elif doc.get("storage"):
        kind = "scanline, "
    rows = [
        ("storage", f"{kind}{doc['compression'] or 'default'} compression"),
        ("size", f"{doc['width']} x {doc['height']}"
         + (f", pixel aspect {doc['pixel_aspect']}" if doc.get("pixel_aspect", 1.0) != 1.0 else "")),
    ]
    if doc.get("data_window"):
        rows.append(("data window", _window(doc["data_window"])))
        rows.append(("display window", _window(doc["display_window"])))
    rows.append(("channels", _channels(doc["channels"])))
    if doc.get("levels"):
        rows.append(("levels", f"{doc['levels']}: oxi reads the top level (--mip-level 0)"))
    colour = doc.get("colour") or {}
    rows.append(("colour space", ", ".join(f"{k} {_value(v)}" for k, v in colour.items()) or "not stated"))
    for key, value in doc["attributes"].items():
        rows.append((key, _value(value)))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim")
    grid.add_column(overflow="fold")
    for label, value in rows:
        grid.add_row(label, str(value))
    console.print(grid, markup=False)
    if "stats" in doc:
        table = Table(show_edge=False, pad_edge=False)
        for col in ("channel", "min", "max", "mean", "NaN", "+Inf", "-Inf"):
            table.add_column(col, justify="left" if col == "channel" else "right")
        for name, s in doc["stats"].items():
            table.add_row(name, _num(s["min"]), _num(s["max"]), _num(s["mean"]), str(s["nan"]), str(s["pos_inf"]),
                          str(s["neg_inf"]))
        console.print(table)


def _value(v: Any) -> str:
    """Attribute values for people: floats to 6 significant digits (chromaticities are float32)."""
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return v if isinstance(v, str) else json.dumps(v)


def _window(box: list[list[int]] | None) -> str:
    if box is None:
        return "-"
    (x0, y0), (x1, y1) = box
    return f"({x0}, {y0}) - ({x1}, {y1}), {x1 - x0 + 1} x {y1 - y0 + 1}"


def _channels(channels: list[dict[str, str]]) -> str:
    """R, G, B, A (half); Z (float): consecutive channels of one type grouped."""
    groups: list[tuple[str, list[str]]] = []
    for c in channels:
        if groups and groups[-1][0] == c["type"]:
            groups[-1][1].append(c["name"])
        else:
            groups.append((c["type"], [c["name"]]))
    return "; ".join(f"{', '.join(names)} ({kind})" for kind, names in groups)


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.6g}"


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
