"""Help text fitted to the terminal: examples broken between arguments with ` \\`, prose and tables re-wrapped."""

from __future__ import annotations

import re
import shlex
import textwrap

# Typer keeps the lines of a paragraph that starts with "\b" as they are; the terminal then folds any that is too
# long at its edge, mid-flag and with no indent (`--continue-on-error` alone on a line). Those lines are fitted here.
KEEP = "\b"
# Rich prints the help one column in from each edge.
MARGIN = 2
_COMMAND = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:oxi|dask|openjd)\b")
_COMMENT = re.compile(r"\s{2,}#\s")
_ROW = re.compile(r"^(\s+\S(?:.*?\S)?\s{2,})(\S.*)$")  # an indented `--flag VALUE   what it does` row


def fit_help(text: str | None, width: int) -> str | None:
    """`text` with each kept ("\\b") paragraph's lines fitted to `width` columns; other paragraphs are left to
    Typer, which wraps them itself."""
    if not text:
        return text
    room = max(width - MARGIN, 40)
    paragraphs = text.split("\n\n")
    return "\n\n".join(_fit_kept(p, room) if p.startswith(KEEP) else p for p in paragraphs)


def _fit_kept(paragraph: str, room: int) -> str:
    out: list[str] = []
    prose: list[str] = []  # lines of one hand-wrapped statement, joined until one ends a sentence

    def flush() -> None:
        if any(len(line) > room for line in prose):
            joined = " ".join(line.strip() for line in prose)
            out.extend(textwrap.wrap(joined, room, break_long_words=False, break_on_hyphens=False))
        else:
            out.extend(prose)
        prose.clear()

    lines = paragraph.split("\n")
    continued = False  # the line before was a command's, ending in ` \`: this one carries on its arguments
    while lines:
        line = lines.pop(0)
        stripped = line.strip()
        if line == KEEP or not stripped:
            kind = "keep"
        elif continued or _COMMAND.match(stripped):
            kind = "command"
        elif line.startswith(" ") and _ROW.match(line):
            kind = "row"
        elif not line.startswith(" "):
            prose.append(line)
            if stripped.endswith((".", ":", "!", "?")):
                flush()
            continue
        else:
            kind = "keep"
        was_continued, continued = continued, kind == "command" and stripped.endswith("\\")
        flush()
        if len(line) <= room or kind == "keep":
            out.append(line)
        elif kind == "command":
            out.extend(_fit_command(line, room, after=was_continued))
        elif row := _ROW.match(line):
            head, description = row.group(1), row.group(2)
            while lines and _continues(lines[0], len(head)):  # the row's own hand-wrapped lines
                description += " " + lines.pop(0).strip()
            out.extend(_fit_row(head, description, room))
    flush()
    return "\n".join(out)


def _continues(line: str, column: int) -> bool:
    """Whether `line` carries on the description of the row above (indented to its column, not a row itself)."""
    return bool(line.strip()) and len(line) - len(line.lstrip()) >= column and not _ROW.match(line)


def _fit_command(line: str, room: int, after: bool = False) -> list[str]:
    """An example command: its comment on a line above when both do not fit (`after` it for the last line of a
    command already continued, which a comment line must not split), the command broken between arguments (a flag
    stays with its value) with ` \\` and a deeper indent."""
    indent = line[: len(line) - len(line.lstrip())]
    command, comment = line.strip(), ""
    if found := _COMMENT.search(command):
        command, comment = command[: found.start()], command[found.end() :]
    note = [f"{indent}# {comment}"] if comment else []  # called for lines too long only
    words: list[str] = []
    for word in _words(command):  # a flag whose value alone fills a line goes on a line of its own
        flag, _, value = word.partition(" ")
        words += [flag, value] if value and len(indent) + 4 + len(word) + 2 > room else [word]
    lines, current = [], indent
    for word in words:
        if current.strip() and len(current) + 1 + len(word) + 2 > room:
            lines.append(current + " \\")
            current = indent + "    " + word
        else:
            current = f"{current} {word}" if current.strip() else current + word
    lines.append(current)
    return lines + note if after else note + lines


def _words(command: str) -> list[str]:
    """The command's arguments as written (quotes kept), a flag joined to the value after it."""
    lexer = shlex.shlex(command, posix=False)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: split at spaces, as written
        tokens = command.split()
    words: list[str] = []
    for token in tokens:
        flag = words[-1] if words else ""
        if flag.startswith("-") and " " not in flag and "=" not in flag and not token.startswith("-"):
            words[-1] += " " + token
        else:
            words.append(token)
    return words


def _fit_row(head: str, description: str, room: int) -> list[str]:
    """A table row: the description wrapped under itself (a hanging indent), or on the next line when the head
    leaves it no room."""
    column = len(head) if len(head) <= room // 2 else len(head) - len(head.lstrip()) + 4
    first = head if len(head) <= room // 2 else head.rstrip()
    wrapped = textwrap.wrap(description, max(room - column, 20), break_long_words=False, break_on_hyphens=False)
    if first is head:
        return [head + wrapped[0], *(" " * column + w for w in wrapped[1:])]
    return [first, *(" " * column + w for w in wrapped)]
