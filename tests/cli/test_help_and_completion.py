"""Help says what it means (no text eaten by rich markup, --name's fields defined), mistakes get a "did you
mean", and shell completion offers the values options take (colour-space names from the OCIO config)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oxi_cli.backends.registry import KINDS
from oxi_cli.ops.filters import FILTER_NAMES
from tests.cli.conftest import hdr_rgba, run_oxi, write_exr
from tests.cli.test_cli_errors import assert_one_line_error


def help_texts() -> list[tuple[str, str]]:
    """(where, text) for every command's help, epilog and option help."""
    import typer

    from oxi_cli.cli.main import app

    texts = []
    for name, command in typer.main.get_command(app).commands.items():
        texts += [(name, command.help or ""), (f"{name} epilog", command.epilog or "")]
        texts += [(f"{name} {param.name}", getattr(param, "help", None) or "") for param in command.params]
    return texts


def test_no_help_text_loses_words_to_rich_markup():
    from rich.text import Text

    for where, text in help_texts():
        # What rich shows is the text itself, with `\[` (a literal bracket) shown as `[` (and Click's \b
        # no-rewrap marks, which are not text, left out).
        plain = text.replace("\b", "")
        assert Text.from_markup(plain).plain == plain.replace("\\[", "["), where


def test_cluster_help_names_the_extra_to_install(plate: Path):
    res = run_oxi("cdl", "--help")
    assert res.returncode == 0 and "oxi[cluster]" in res.stdout


def test_name_help_defines_every_field_and_its_sequence_example_does_what_it_says(tmp_path: Path):
    from oxi_cli.batch.naming import TEMPLATE_FIELDS

    text = dict(help_texts())["cdl name"]
    for field in TEMPLATE_FIELDS:
        assert "{" + field + "}" in text
    seq = tmp_path / "seq"
    seq.mkdir()
    for frame in (1001, 1002):
        write_exr(seq / f"plate.{frame}.exr", hdr_rgba(4, 6), aovs=False)
    for template, first in (("{stem}_graded{ext}", "plate.1001_graded.exr"),
                            ("{base}_graded.{frame:04d}{ext}", "plate_graded.1001.exr")):
        assert f"'{template}' gives {first}" in text
        res = run_oxi("cdl", str(seq / "plate.####.exr"), "-o", str(tmp_path / template[:5]), "--name", template,
                      "--slope", "1.1")
        assert res.returncode == 0, res.stderr
        assert (tmp_path / template[:5] / first).exists()


@pytest.mark.parametrize(
    ("recipe", "words"),
    [
        ('[[op]]\nresise = "50%"\n', ("'resise' is not one; did you mean resize?",)),
        ('[[op]]\nresize = "50%"\nfiltr = "box"\n', ("no parameter 'filtr'; did you mean filter?",)),
        ('[outptu]\nname = "x"\n\n[[op]]\nblur = 1\n', ("unknown key 'outptu'; did you mean output?",)),
        ('[output]\nnmae = "x"\n\n[[op]]\nblur = 1\n', ("no setting 'nmae'; did you mean name?",)),
    ],
)
def test_a_recipe_typo_gets_a_did_you_mean(plate: Path, tmp_path: Path, recipe: str, words):
    path = tmp_path / "r.toml"
    path.write_text(recipe)
    assert_one_line_error(run_oxi("run", "--recipe", str(path), str(plate), str(tmp_path / "o.exr")), 2, *words)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--blurr", "3"], ("unknown option --blurr; did you mean --blur?",)),
        (["--blur", "3", "--jsn"], ("unknown option --jsn; did you mean --json?",)),
        (["--resize:filtr=box", "50%"], ("no parameter 'filtr'; did you mean filter?",)),
    ],
)
def test_a_run_flag_typo_gets_a_did_you_mean(plate: Path, tmp_path: Path, args, words):
    assert_one_line_error(run_oxi("run", str(plate), str(tmp_path / "o.exr"), *args), 2, *words)


def test_display_without_view_says_view_is_what_is_missing(plate: Path, tmp_path: Path):
    res = run_oxi("display", str(plate), str(tmp_path / "o.png"), "--from", "ACEScg", "--display", "sRGB - Display")
    assert_one_line_error(res, 2, "display is missing --view (")
    res = run_oxi("colorspace", str(plate), str(tmp_path / "o.exr"), "--to", "ACEScct")
    assert_one_line_error(res, 2, "colorspace is missing --from (")


def complete(words: str) -> list[str]:
    """What bash completion offers for the last word of `words` (a trailing space: an empty last word), each word
    as bash reads what is inserted (escaped: tests/cli/test_completion_quoting.py)."""
    oxi = shutil.which("oxi")
    cmd = [oxi] if oxi else [sys.executable, "-m", "oxi_cli"]
    env = {**os.environ, "_OXI_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split(" ")) - 1)}
    env.pop("OCIO", None)  # OCIO's built-in default config, whatever the machine has set
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0 and not res.stderr, res.stderr
    return [shlex.split(line)[0] for line in res.stdout.splitlines() if line]  # nothing to offer: an empty line


@pytest.mark.parametrize(
    ("words", "offered"),
    [
        ("oxi resize a.exr b.exr --fit ", ["fit", "fill", "pad", "stretch"]),
        ("oxi resize a.exr b.exr --filter ", list(FILTER_NAMES)),
        ("oxi resize a.exr b.exr --filter c", ["catmull-rom", "cubic"]),
        ("oxi cdl a.exr b.exr --backend ", ["auto", *KINDS]),
        ("oxi cdl a.exr b.exr --style ", ["noclamp", "asc"]),
        ("oxi lut3d a.exr b.exr --interp ", ["tetrahedral", "trilinear"]),
        ("oxi blur a.exr b.exr --strategy ", ["auto", "single", "tiled", "streaming"]),
        ("oxi cdl a.exr b.exr --out-type uint", ["uint8", "uint16"]),
        ("oxi display a.exr b.mov --codec prores_4", ["prores_4444", "prores_4444xq"]),
    ],
)
def test_completion_offers_the_values_an_option_takes(words: str, offered: list[str]):
    assert complete(words) == offered


def test_completion_offers_colour_spaces_displays_and_views_of_the_active_config():
    from oxi_cli.formats.ocio_config import listing, open_config

    info = listing(open_config(None))
    spaces = complete("oxi colorspace a.exr b.exr --from ACESc")
    assert "ACEScg" in spaces and all(s.startswith("ACESc") for s in spaces)
    assert complete("oxi display a.exr b.png --display ") == list(info["displays"])
    display = next(iter(info["displays"]))
    views = complete(f"oxi display a.exr b.png --display {display.replace(' ', chr(92) + ' ')} --view ")
    assert views == info["displays"][display]


def test_completion_reads_the_config_given_on_the_command_line():
    spaces = complete("oxi colorspace a.exr b.exr --config ocio://studio-config-latest --from Linear")
    assert "Linear Rec.2020" in spaces


def test_completion_from_a_config_that_cannot_be_read_offers_nothing_and_prints_nothing():
    assert complete("oxi colorspace a.exr b.exr --config /no/such/config.ocio --from A") == []
