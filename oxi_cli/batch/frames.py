"""Frame sequences as oiiotool users write them: patterns (plate.####.exr, plate.%04d.exr) and frame ranges."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from oxi_cli.errors import UsageError

# One frame-number token: printf (%04d, %d), a run of '#' or a run of '@'.
_TOKEN = re.compile(r"%0?(\d*)d|#+|@+")
_RANGE = re.compile(r"(\d+)(?:-(\d+)(?:x(\d+))?)?")
MAX_FRAMES = 1_000_000  # a typo such as 1-99999999 should fail, not allocate a list of 10^8 frames


@dataclass(frozen=True)
class SequencePattern:
    """A file path with one frame-number token in its file name, e.g. shots/plate.####.exr.

    Padding as oiiotool and RV: a lone `#` means 4 digits; `##`... (two or more) and `@@@` mean one digit
    per character; `%04d` means 4, `%d` none. Frames wider than the padding are written in full.
    """

    text: str
    head: str  # the path before the token
    tail: str  # the path after it
    padding: int

    def path(self, frame: int) -> Path:
        return Path(f"{self.head}{frame:0{self.padding}d}{self.tail}")

    def scan(self) -> dict[int, Path]:
        """Frames of this sequence that exist on disk, by frame number."""
        folder, prefix = os.path.split(self.head)
        folder_path = Path(folder) if folder else Path(".")
        if self.tail.find(os.sep) >= 0 or (os.altsep and self.tail.find(os.altsep) >= 0):
            raise UsageError(f"{self.text}: the frame number must be in the file name, not in a folder name")
        pattern = re.compile(re.escape(prefix) + r"(\d+)" + re.escape(self.tail))
        found: dict[int, Path] = {}
        try:
            names = os.listdir(folder_path)
        except FileNotFoundError:
            raise UsageError(f"{self.text}: folder {folder_path} does not exist; check the path") from None
        except OSError as e:
            raise UsageError(f"{self.text}: cannot list {folder_path} ({e.strerror})") from None
        for name in names:
            m = pattern.fullmatch(name)
            # Only names this pattern would write: plate.1001.exr matches ####, plate.01001.exr does not.
            if m and f"{int(m.group(1)):0{self.padding}d}" == m.group(1):
                found[int(m.group(1))] = Path(folder, name) if folder else Path(name)
        return dict(sorted(found.items()))


def find_pattern(text: str) -> SequencePattern | None:
    """The sequence pattern in `text`'s file name, or None when it names a plain file."""
    folder, name = os.path.split(text)
    tokens = list(_TOKEN.finditer(name))
    if not tokens:
        return None
    if len(tokens) > 1:
        raise UsageError(f"{text}: more than one frame-number token ({', '.join(t.group(0) for t in tokens)})")
    t = tokens[0]
    token = t.group(0)
    if token.startswith("%"):
        padding = int(t.group(1)) if t.group(1) else 1
    elif token == "#":
        padding = 4
    else:
        padding = len(token)
    if padding < 1 or padding > 16:
        raise UsageError(f"{text}: frame padding must be 1..16 digits, got {padding}")
    head = os.path.join(folder, name[: t.start()]) if folder else name[: t.start()]
    return SequencePattern(text, head, name[t.end() :], padding)


def parse_frames(text: str) -> list[int]:
    """'1001-1100', '1001-1100x2', '1001,1005,1010-1020' -> sorted unique frame numbers."""
    frames: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        m = _RANGE.fullmatch(part)
        if not m:
            raise UsageError(
                f"--frames takes ranges such as 1001-1100, 1001-1100x2 or 1001,1005,1010-1020; got {text!r}"
            )
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        step = int(m.group(3)) if m.group(3) is not None else 1
        if last < first:
            raise UsageError(f"--frames range {part!r} ends before it starts; write it as {last}-{first}")
        if step < 1:
            raise UsageError(f"--frames step in {part!r} must be at least 1")
        if (last - first) // step + 1 + len(frames) > MAX_FRAMES:
            raise UsageError(f"--frames {text!r} asks for more than {MAX_FRAMES} frames")
        frames.update(range(first, last + 1, step))
    return sorted(frames)


MAX_SPANS = 12  # a message lists this many ranges, then counts the rest


def format_frames(frames: Iterable[int]) -> str:
    """[1004, 1010, 1011, 1012] -> '1004, 1010-1012'; every other frame -> '1002-1100x2' (the --frames syntax),
    so a message about missing frames stays one short line however many there are."""
    values = sorted(set(frames))
    spans: list[str] = []
    i = 0
    while i < len(values):
        j = _run_end(values, i)
        spans.append(_span(values[i], values[j], values[j] - values[j - 1] if j > i else 1))
        i = j + 1
    if len(spans) > MAX_SPANS:
        spans = [*spans[:MAX_SPANS], f"and {len(spans) - MAX_SPANS} more ranges"]
    return ", ".join(spans)


def _run_end(values: list[int], i: int) -> int:
    """Index of the last frame of the evenly stepped run starting at i (a step > 1 needs three frames)."""
    if i + 1 >= len(values):
        return i
    step = values[i + 1] - values[i]
    j = i + 1
    while j + 1 < len(values) and values[j + 1] - values[j] == step:
        j += 1
    return j if step == 1 or j - i >= 2 else i


def _span(first: int, last: int, step: int) -> str:
    if first == last:
        return str(first)
    return f"{first}-{last}" if step == 1 else f"{first}-{last}x{step}"


def count_frames(n: int) -> str:
    return f"{n} frame{'s' if n != 1 else ''}"


def one_sequence(first: str, second: str) -> str | None:
    """The pattern (`shot.%04d.exr`) when the two paths are different frames of one sequence, else None: same
    folder, same name around a frame number of the same width (shot.1001.exr and shot.1002.exr)."""
    found = [re.fullmatch(r"(.*[._])(\d+)(\.[^./\\]+)", path) for path in (first, second)]
    if not all(found):
        return None
    (head, frame, tail), (head2, frame2, tail2) = (m.groups() for m in found)  # type: ignore[union-attr]
    if head != head2 or tail != tail2 or len(frame) != len(frame2) or frame == frame2 or "%" in head + tail:
        return None
    return f"{head}%0{len(frame)}d{tail}"


def frame_in_name(path: Path) -> int | None:
    """The digits ending a file's stem after '.' or '_' (plate_v2.1001.exr, render_0042.exr), or None.

    Digits glued to letters are part of a name, not a frame: sh010.exr and shot_v002.exr have none.
    """
    m = re.search(r"(?:^|[._])(\d+)$", path.stem)
    return int(m.group(1)) if m else None
