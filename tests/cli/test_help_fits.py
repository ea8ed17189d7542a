"""Help at 80 columns: examples broken between arguments with ` \\` (never mid-flag, never a fragment at column 1),
every word of the wide help still there; and --verbose, which says what each file went through."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.cli.conftest import OXI, run_oxi

COMMANDS = [[], ["cdl"], ["lut3d"], ["matrix"], ["resize"], ["blur"], ["colorspace"], ["display"], ["run"], ["info"],
            ["worker"], ["server"], ["probe"]]
BOX = re.compile(r"[│╭╮╰╯─┃━]")


def _help(command: list[str], columns: int) -> str:
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "dumb"}
    env.pop("TERMINAL_WIDTH", None)
    done = subprocess.run([OXI or "oxi", *command, "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _examples(text: str) -> list[list[str]]:
    """Each example command of a help text (outside the option panels, which rich wraps in their cells), its ` \\`
    continuations joined, as the shell splits it."""
    found, pending = [], ""
    for line in text.splitlines():
        if BOX.search(line):
            continue
        stripped = line.strip()
        if pending:
            pending += " " + stripped
        elif re.match(r"^(?:[A-Z_]+=\S*\s+)*oxi\s", stripped):
            pending = stripped
        else:
            continue
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        command = re.split(r"\s{2,}#\s", pending)[0]
        found.append(shlex.split(command, comments=False))
        pending = ""
    return found


def _words(text: str) -> Counter[str]:
    words = BOX.sub(" ", text).replace("#", " ").split()
    return Counter(w for w in words if w != "\\")


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) or "oxi" for c in COMMANDS])
def test_help_at_80_columns_breaks_examples_between_arguments_and_keeps_every_word(command: list[str]):
    wide, narrow = _help(command, 250), _help(command, 80)
    assert max(len(line.rstrip()) for line in narrow.splitlines()) <= 80
    assert _examples(narrow) == _examples(wide) and _examples(wide), "an example was cut or lost at 80 columns"
    # A word the terminal folded mid-way (`--continue-on-` / `error`) would be two words here.
    assert _words(narrow) == _words(wide)


def test_verbose_says_what_each_file_went_through(tmp_path: Path):
    from tests.cli.conftest import hdr_rgba, write_exr

    src = write_exr(tmp_path / "plate.exr", hdr_rgba(20, 30), aovs=False)
    res = run_oxi("run", str(src), "-o", str(tmp_path / "half.exr"), "--cdl", "slope=1.1", "--resize", "50%",
                  "--verbose", "--backend", "cpu")
    assert res.returncode == 0, res.stderr
    line = res.stderr.rstrip().splitlines()[-1]
    seconds = r"read \d+\.\d\d s / compute \d+\.\d\d s / write \d+\.\d\d s"
    want = (rf"  {re.escape(str(src))}: 30x20 -> 15x10, cdl, resize on cpu \(.+\), single, {seconds}, "
            r"peak memory \S+ \w+")
    assert re.fullmatch(want, line), line
    quiet = run_oxi("cdl", str(src), str(tmp_path / "q.exr"), "--slope", "1.1", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_quiet_and_verbose_together_are_refused(tmp_path: Path):
    res = run_oxi("cdl", "a.exr", str(tmp_path / "b.exr"), "--slope", "1.1", "-q", "-v")
    assert res.returncode == 2 and "--quiet" in res.stderr and "--verbose" in res.stderr
