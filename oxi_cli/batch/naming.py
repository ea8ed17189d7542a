"""Where each input's output goes: one file, a folder (with a --name template), or a sequence pattern."""

from __future__ import annotations

import os
import re
import stat
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from oxi_cli.batch.frames import SequencePattern, find_pattern
from oxi_cli.batch.inputs import InputItem, Inputs
from oxi_cli.errors import UsageError

TEMPLATE_FIELDS = ("stem", "name", "ext", "frame", "base", "parent")
DEFAULT_TEMPLATE = "{name}"
# A file name longer than this is refused by every common filesystem (NAME_MAX); a format width past it
# would only build a huge string (`{frame:>999999999}` allocates gigabytes) before failing.
NAME_MAX = 255


@dataclass(frozen=True)
class OutputTarget:
    """`kind` is 'file' (one input, one output), 'folder' or 'pattern' (plate.####.exr)."""

    kind: str
    path: Path
    pattern: SequencePattern | None = None
    template: str = DEFAULT_TEMPLATE


def resolve_target(
    output: str | None, inputs: Inputs, template: str | None, default_template: str | None = None
) -> OutputTarget:
    """Decide what -o means for these inputs; `default_template` (a recipe's) names files in a folder
    unless --name is given, and is ignored for a single output file or a sequence pattern.

    A sequence pattern is always a pattern; an existing folder, or a path ending in '/', is a folder; with
    several inputs (or a folder, glob or sequence input) any other path is a folder, created if missing.
    With one plain input file, any other path is the output file itself (the `oxi cdl IN OUT` form).
    """
    if output is None:
        raise UsageError("give the output: `IN OUT` for one file, or -o/--output FOLDER (or PATTERN) for several")
    pattern = find_pattern(output) if not Path(output).is_file() else None
    if pattern is not None:
        if template is not None:
            raise UsageError("--name cannot be combined with a sequence output pattern; use one or the other")
        _check_extension(Path(output), "the output pattern")
        return OutputTarget("pattern", Path(output), pattern)
    folder_like = output.endswith(("/", os.sep)) or Path(output).is_dir()
    if folder_like or inputs.batch or len(inputs.items) > 1 or template is not None:
        if Path(output).exists() and not Path(output).is_dir():
            raise UsageError(f"-o {output} is a file, but several inputs need a folder or a pattern like out.####.exr")
        if not folder_like and Path(output).suffix.lower() in _image_extensions():
            raise UsageError(
                f"-o {output} names one file but several inputs were given; give a folder (out/) "
                "or a sequence pattern (out.####.exr)"
            )
        template = template or default_template or DEFAULT_TEMPLATE
        check_template(template)
        return OutputTarget("folder", Path(output), template=template)
    if not Path(output).suffix:
        raise UsageError(
            f"output {output} has no extension; give a file name such as {output}.exr, or a folder ending with /"
        )
    return OutputTarget("file", Path(output))


def output_path(target: OutputTarget, item: InputItem) -> Path:
    """The output file for one input."""
    if target.kind == "file":
        return target.path
    if target.kind == "pattern":
        assert target.pattern is not None
        if item.frame is None:
            raise UsageError(
                f"{item.path} has no frame number for the output pattern {target.path}; use -o FOLDER instead"
            )
        return target.pattern.path(item.frame)
    return contained(target.path, item.rel_dir / render_name(target.template, item))


def refuse_replacing(outputs: Sequence[tuple[InputItem, Path]], overwrite: bool) -> None:
    """Refuse, before any work, outputs that would replace a file the user did not say may go.

    Its own input is --in-place's to allow (io.atomic.refuse_input_overwrite); another input of the same run
    never (it may not have been read yet); any other existing file needs --overwrite, as ffmpeg needs -y, so
    `oxi cdl plate.1001.exr plate.1002.exr` typed for two inputs cannot destroy frame 1002.
    """
    inputs = {_identity(item.path): item.path for item, _ in outputs if not item.missing}
    existing: list[Path] = []
    for item, out in outputs:
        held = _identity(out) if not item.missing else None
        if held is None or held == _identity(item.path):
            continue
        if held in inputs:
            raise UsageError(f"output {out} is also an input of this run ({inputs[held]}); give another output")
        existing.append(out)
    if not existing or overwrite:
        return
    if len(outputs) == 1:
        raise UsageError(f"{existing[0]} exists; pass --overwrite to replace it (env OXI_OVERWRITE=1)")
    more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
    raise UsageError(
        f"{existing[0]}{more} exist{'s' if not more else ''} already; pass --overwrite to replace "
        f"{'them' if more else 'it'}, or --skip-existing to keep {'them' if more else 'it'} and process the rest"
    )


def refuse_unwritable(outputs: Sequence[Path], create_folders: bool) -> None:
    """Refuse, before any file is read, outputs whose folder is missing (unless the batch creates it) or that
    this user may not write into: the user's to fix (exit 2), as knowable before the work as after it."""
    seen: set[Path] = set()
    for out in outputs:
        folder = out.parent
        if folder in seen:
            continue
        seen.add(folder)
        existing = folder
        while create_folders and not existing.exists() and existing != existing.parent:
            existing = existing.parent  # the batch creates the rest: the first folder that exists must take it
        if not existing.is_dir():
            raise UsageError(f"output folder {folder} does not exist; create it first")
        # access() asks the kernel as a write would: permissions, ACLs, a read-only mount; root may write anyway.
        if not os.access(existing, os.W_OK | os.X_OK):
            raise UsageError(f"cannot write into the output folder {existing} (read-only for this user); "
                             "give another output or change the folder's permissions")


def _identity(path: Path) -> tuple[int, int] | None:
    """The regular file at `path` (device and inode, links followed), or None: a device, FIFO or folder there is
    never replaced at all (io/atomic.py refuses it, saying so), so --overwrite would not help."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def contained(folder: Path, relative: Path) -> Path:
    """`folder / relative`, refused unless it stays inside `folder` once `..` and symlinks are resolved.

    Checked after every --name field is expanded, since a field ({stem}, {parent}) can carry `..` or a
    separator from a file name; a shared recipe must not be able to write wherever the user can.
    """
    path = folder / relative
    root = os.path.realpath(folder)
    resolved = os.path.realpath(path)
    if relative.is_absolute() or ".." in relative.parts or os.path.commonpath([root, resolved]) != root:
        raise UsageError(f"output {_shown(str(path))} lies outside the output folder {folder}; fix --name")
    if resolved == root:
        raise UsageError(f"output name for {folder} is empty; fix --name")
    return path


def render_name(template: str, item: InputItem) -> str:
    path = item.path
    suffix = path.suffix
    stem = path.name[: -len(suffix)] if suffix else path.name
    fields = {
        "stem": stem,
        "name": path.name,
        "ext": suffix,
        "frame": item.frame,
        "base": _base(stem, item.frame),
        "parent": path.parent.name,
    }
    if item.frame is None and "{frame" in template:
        raise UsageError(f"--name uses {{frame}} but {path} has no frame number in its name")
    try:
        name = template.format(**fields)
    except (KeyError, IndexError, ValueError) as e:
        raise UsageError(f"--name {_shown(template)!r} cannot be filled for {path}: {e}") from None
    if any(len(part.encode(errors="surrogateescape")) > NAME_MAX for part in Path(name).parts):
        raise UsageError(f"--name {_shown(template)!r} makes a file name over {NAME_MAX} bytes for {path}")
    return name


def check_template(template: str) -> None:
    """Reject unknown {fields} before any work is done."""
    try:
        names = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as e:
        shown = _shown(template)
        raise UsageError(f"--name {shown!r} is not a valid template ({e}); write fields as {{stem}}") from None
    known = ", ".join("{" + f + "}" for f in TEMPLATE_FIELDS)
    for name in names:
        if name not in TEMPLATE_FIELDS:
            raise UsageError(f"--name field {{{_shown(name)}}} is unknown; use {known}")
    for _, _, spec, _ in string.Formatter().parse(template):
        if spec and "{" in spec:
            raise UsageError(f"--name format {_shown(spec)!r} takes no nested fields; write a fixed width")
        if spec and any(int(n) > NAME_MAX for n in re.findall(r"\d+", spec)):
            raise UsageError(f"--name format {_shown(spec)!r} is wider than a file name can be ({NAME_MAX})")


def _shown(text: str, limit: int = 80) -> str:
    """A user-given string cut to fit one error line."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _base(stem: str, frame: int | None) -> str:
    """The stem without its trailing frame number and separator: plate.1001 -> plate."""
    if frame is None:
        return stem
    return re.sub(r"[._-]?\d+$", "", stem)


def _check_extension(path: Path, what: str) -> None:
    if path.suffix.lower() not in _image_extensions():
        raise UsageError(f"{what} {path} needs an image extension (.exr, .png, .tif, .jpg)")


def _image_extensions() -> set[str]:
    from oxi_cli.io.formats import by_extension

    return set(by_extension())
