"""Shell completion as a user meets it: a real bash and zsh, on a terminal, with oxi's completion script loaded, are
sent a command line and a TAB; the line they then run must hold the completed value as one word, spaces and
parentheses included (`--view AC<TAB>` once inserted `ACES 2.0 - SDR 100 nits (Rec.709)` unquoted)."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oxi_cli.cli.completion import bash_word, open_quote

SDR_VIEW = "ACES 2.0 - SDR 100 nits (Rec.709)"
DONE = "DONE" + "2"  # what the stand-in prints last: its definition's echo shows DONE$((1+1)), never this


class Terminal:
    """A shell on a pseudo-terminal: write keys, wait for what it shows."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.fd, child = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, env=env, close_fds=True,
                                     start_new_session=True)
        os.close(child)
        self.seen = ""

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait_for(self, text: str, timeout: float = 120) -> str:
        """Everything shown until `text` appears (a condition, not a sleep), or fail with what was shown."""
        end = time.monotonic() + timeout
        while text not in self.seen:
            left = end - time.monotonic()
            assert left > 0, f"the shell never showed {text!r}; it showed:\n{self.seen[-2000:]}"
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if ready:
                try:
                    self.seen += os.read(self.fd, 65536).decode(errors="replace")
                except OSError:  # the shell exited
                    break
        return self.seen

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        os.close(self.fd)


def _script(shell: str, folder: Path) -> Path:
    """oxi's completion script for `shell`, as `oxi --show-completion` prints it (Click's source_ instruction)."""
    env = {**os.environ, "_OXI_COMPLETE": f"source_{shell}"}
    text = subprocess.run(["oxi"], env=env, capture_output=True, text=True, timeout=120, check=True).stdout
    assert "_oxi_completion" in text
    path = folder / f"oxi.{shell}"
    path.write_text(text)
    return path


def _completed_args(shell: str, typed: str, tmp_path: Path) -> list[str]:
    """The arguments `oxi` receives when `typed` is completed with one TAB and run. `oxi` is a shell function
    printing its arguments here; the completion script still asks the real oxi (through `env`)."""
    found = shutil.which(shell)
    assert found, f"{shell} must be installed for its completion to be tested (.ci/run installs it)"
    script = _script(shell, tmp_path)
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path),
           "TERM": "dumb", "OXI_SERVER": "off", "LANG": "C.UTF-8"}
    argv = [found, "--norc", "--noprofile", "-i"] if shell == "bash" else [found, "-f", "-i"]
    term = Terminal(argv, env)
    try:
        setup = ["PS1='$ '"]
        if shell == "zsh":
            setup += ["unsetopt zle_bracketed_paste", "autoload -Uz compinit", "compinit -u -D"]
        else:
            setup += ["bind 'set enable-bracketed-paste off' 2>/dev/null"]
        setup += [f"source {script}", "oxi() { printf 'N=%s\\n' \"$#\"; printf '<%s>\\n' \"$@\"; echo DONE$((1+1)); }",
                  "echo READY$((1+1))"]
        term.send("\n".join(setup) + "\n")
        term.wait_for("READY2")
        # Keys wait in the terminal's queue: the line editor finishes the completion (asking oxi) before Enter.
        term.send(typed + "\t\n")
        out = term.wait_for(DONE)
    finally:
        term.close()
    lines = out[out.rindex("N="):out.rindex(DONE)].replace("\r", "").splitlines()
    count = int(lines[0][2:])
    args = [line[1:-1] for line in lines[1:] if line.startswith("<")]
    assert len(args) == count, lines
    return args


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@pytest.mark.parametrize(("typed", "word"), [
    ("oxi display a.exr b.png --display 'sRGB - Display' --view ACES", SDR_VIEW),
    ("oxi display a.exr b.png --display sRGB", "sRGB - Display"),
    ('oxi display a.exr b.png --display "sRGB - Display" --view "ACES', SDR_VIEW),
])
def test_a_completed_value_with_spaces_and_parentheses_stays_one_word(tmp_path: Path, shell: str, typed: str,
                                                                       word: str):
    args = _completed_args(shell, typed, tmp_path)
    assert args[-1] == word, args
    assert len(args) == len(_words(typed)), args


def _words(typed: str) -> list[str]:
    import shlex

    quote = open_quote(typed)
    return shlex.split(typed + quote)[1:]


@pytest.mark.parametrize(("value", "quote", "want"), [
    (SDR_VIEW, "", r"ACES\ 2.0\ -\ SDR\ 100\ nits\ \(Rec.709\)"),
    (SDR_VIEW, '"', f'"{SDR_VIEW}"'),
    ("it's", "'", "'it'\\''s'"),
    ('a "b" $c', '"', '"a \\"b\\" \\$c"'),
])
def test_bash_words_read_back_as_the_value(value: str, quote: str, want: str):
    word = bash_word(value, quote)
    assert word == want
    read = subprocess.run(["bash", "-c", f"printf '%s' {word}"], capture_output=True, text=True, check=True).stdout
    assert read == value
