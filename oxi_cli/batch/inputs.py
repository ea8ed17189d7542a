"""Turn command-line inputs (files, globs, folders, frame sequences) into the list of files to process."""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from oxi_cli.batch.frames import SequencePattern, find_pattern, frame_in_name, parse_frames
from oxi_cli.errors import UsageError

_MAGIC = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class InputItem:
    """One file to process (or a sequence frame that should exist but does not)."""

    path: Path
    frame: int | None = None
    rel_dir: Path = Path()  # sub-folder below a walked folder or glob root, mirrored under the output folder
    missing: bool = False  # a sequence frame absent from disk
    required: bool = False  # a missing frame counts as a failure of the batch (exit 1)


@dataclass
class Inputs:
    items: list[InputItem]
    batch: bool  # several files, or a folder / glob / sequence: the output must be a folder or a pattern
    notes: list[str] = field(default_factory=list)  # warnings to print before the batch starts

    @property
    def present(self) -> list[InputItem]:
        return [i for i in self.items if not i.missing]


def image_extensions() -> set[str]:
    from oxi_cli.io.formats import by_extension

    return set(by_extension())


def natural_key(path: Path) -> list[object]:
    """Sort plate.2.exr before plate.10.exr, as people count."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", str(path))]


def expand_inputs(args: Sequence[str], *, frames: str | None = None, recursive: bool = False) -> Inputs:
    """Resolve every argument in order; the same file named twice is processed once.

    A literal path that exists wins over any pattern reading of it. Otherwise: a frame-number token makes
    a sequence (frames from --frames, or every frame on disk), a folder lists its images (--recursive
    descends), a glob lists its matches. A plain file that does not exist is kept: it fails when
    processed, with the other files still handled per --continue-on-error.
    """
    wanted = parse_frames(frames) if frames is not None else None
    items: list[InputItem] = []
    notes: list[str] = []
    batch = len(args) > 1
    used_frames = False
    for arg in args:
        path = Path(arg)
        if path.is_file():
            items.append(InputItem(path, frame_in_name(path)))
            continue
        pattern = find_pattern(arg)
        if pattern is not None:
            used_frames = True
            batch = True
            items.extend(_sequence(pattern, wanted))
        elif path.is_dir():
            batch = True
            items.extend(_folder(path, recursive))
        elif _MAGIC.search(arg):
            batch = True
            items.extend(_glob(arg, recursive))
        else:
            items.append(InputItem(path, frame_in_name(path)))
    if wanted is not None and not used_frames:
        raise UsageError("--frames needs a sequence input such as plate.####.exr or plate.%04d.exr")
    return Inputs(_unique(items), batch, notes)


def _sequence(pattern: SequencePattern, wanted: list[int] | None) -> list[InputItem]:
    """Every frame of the range (--frames, else first..last on disk); absent ones are missing items, which
    the batch reports once, compactly, and counts as failures whether or not --frames named them."""
    on_disk = pattern.scan()
    if wanted is None:
        if not on_disk:
            raise UsageError(f"{pattern.text}: no frames of this sequence on disk; check the path and padding")
        frames: Sequence[int] = range(min(on_disk), max(on_disk) + 1)
    else:
        frames = wanted
    return [
        InputItem(on_disk[f], f) if f in on_disk else InputItem(pattern.path(f), f, missing=True, required=True)
        for f in frames
    ]


def _folder(folder: Path, recursive: bool) -> list[InputItem]:
    exts = image_extensions()
    found: list[Path] = []
    if recursive:
        for root, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found.extend(Path(root, f) for f in files if _is_image(f, exts))
    else:
        found = [p for p in folder.iterdir() if p.is_file() and _is_image(p.name, exts)]
    if not found:
        hint = "" if recursive else " (add --recursive to look in sub-folders)"
        raise UsageError(f"folder {folder} holds no image files (.exr, .png, .tif, .jpg){hint}")
    return [InputItem(p, frame_in_name(p), p.parent.relative_to(folder)) for p in sorted(found, key=natural_key)]


def _glob(pattern: str, recursive: bool) -> list[InputItem]:
    exts = image_extensions()
    matches = [Path(m) for m in glob.glob(pattern, recursive=recursive or "**" in pattern)]
    files = [p for p in matches if p.is_file() and _is_image(p.name, exts)]
    if not files:
        raise UsageError(f"{pattern} matches no image files; check the pattern (quote it to let oxi expand it)")
    root = _glob_root(pattern)
    return [InputItem(p, frame_in_name(p), _relative_dir(p, root)) for p in sorted(files, key=natural_key)]


def _glob_root(pattern: str) -> Path:
    """The folder part of a glob before its first wildcard: shots/**/*.exr -> shots."""
    parts = Path(pattern).parts
    fixed = [p for p in parts[: next(i for i, p in enumerate(parts) if _MAGIC.search(p))]]
    return Path(*fixed) if fixed else Path(".")


def _relative_dir(path: Path, root: Path) -> Path:
    try:
        return path.parent.relative_to(root)
    except ValueError:
        return Path()


def _is_image(name: str, exts: set[str]) -> bool:
    # Hidden files include oxi's own in-flight temporaries (.name.oxi-tmp-XXXX.exr).
    return not name.startswith(".") and os.path.splitext(name)[1].lower() in exts


def _unique(items: list[InputItem]) -> list[InputItem]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = os.path.normcase(os.path.abspath(item.path))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
