"""Shell completion that inserts values as the shell must read them: quoted or escaped, spaces and parentheses kept."""

from __future__ import annotations

import os
import re
from typing import Any

# What bash reads as itself in a word; anything else in a value gets a backslash (as `printf %q` writes it).
_PLAIN = re.compile(r"[\w@%+=:,./-]")


def open_quote(line: str) -> str:
    """The quote left open at the end of a command line as the shell reads it (`--view "ACES 2`), or ''."""
    quote, escaped = "", False
    for ch in line:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
    return quote


def bash_word(value: str, quote: str = "") -> str:
    """`value` as bash inserts it in place of the word being completed: closed in the quote the user opened,
    else with a backslash before each character bash would split or parse (`ACES\\ 2.0\\ -\\ ...\\(Rec.709\\)`)."""
    if quote == "'":
        return "'" + value.replace("'", "'\\''") + "'"
    if quote == '"':
        return '"' + re.sub(r'(["\\$`])', r"\\\1", value) + '"'
    return "".join(ch if _PLAIN.fullmatch(ch) else "\\" + ch for ch in value)


def register() -> None:
    """oxi's bash completion in place of Typer's, which inserts values as they are (a view's spaces and
    parentheses then break the command line). Called once the Typer command is built (Typer registers its own
    classes then); the script Typer installs stays the same."""
    from typer._click.shell_completion import add_completion_class
    from typer._completion_classes import BashComplete

    class OxiBashComplete(BashComplete):
        def complete(self) -> str:
            args, incomplete = self.get_completion_args()
            quote = open_quote(os.environ.get("COMP_WORDS", ""))
            return "\n".join(bash_word(item.value, quote) for item in self.get_completions(args, incomplete))

        def format_completion(self, item: Any) -> str:
            return bash_word(item.value)

    add_completion_class(OxiBashComplete, "bash")
