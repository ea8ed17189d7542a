"""Options are read once, at the edge: BatchOptions.check turns sizes into bytes that flow down as numbers, the
batch's planning checks --compression and --quality once for each format it writes and hands each file its codec,
and a bad one is refused there in one line naming the option, whichever source gave it."""

from __future__ import annotations

import filecmp
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

import oxi_cli as oxi
from oxi_cli import io
from oxi_cli.batch.options import BatchOptions
from oxi_cli.batch.schedule import memory_budget
from oxi_cli.errors import UsageError
from tests.batch.helpers import exr_folder
from tests.cli.conftest import run_oxi
from tests.cli.test_cli_errors import assert_one_line_error


def test_sizes_from_flags_and_recipes_become_bytes_once():
    opts = BatchOptions(memory_budget="2G", vram_limit="512M")
    opts.check()
    assert (opts.memory_budget, opts.vram_limit) == (2 << 30, 512 << 20)
    opts.check()  # a second check (the API, then the runner's) reads the numbers as they are
    assert memory_budget(opts.memory_budget) == 2 << 30

    from_recipe = BatchOptions()
    from_recipe.apply_settings({"memory_budget": 3 << 30})  # a recipe may give a number of bytes
    from_recipe.check()
    assert from_recipe.memory_budget == 3 << 30


@pytest.mark.parametrize(("field", "option"), [("memory_budget", "--memory-budget"), ("vram_limit", "--vram-limit")])
def test_a_size_that_cannot_be_read_is_refused_naming_its_option(field, option):
    with pytest.raises(UsageError, match=f"^{option}: cannot read memory size 'lots'"):
        BatchOptions(**{field: "lots"}).check()


def _pngs(folder: Path, names: list[str]) -> list[Path]:
    rng = np.random.default_rng(7)
    for name in names:
        iio.imwrite(folder / name, rng.integers(0, 256, (20, 30, 3), dtype=np.uint8))
    return [folder / name for name in names]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--compression", "zipp"), ("unknown EXR compression 'zipp'",)),
        (("--compression", "zip:9"), ("zip takes no level",)),
        (("--quality", "50"), ("--quality applies to JPEG outputs, not EXR",)),
    ],
)
def test_a_bad_codec_for_a_batch_is_one_line_before_any_file_is_processed(tmp_path: Path, args: tuple,
                                                                          words: tuple):
    exr_folder(tmp_path / "in", ["a.exr", "b.exr", "c.exr"])
    out = tmp_path / "out"
    done = run_oxi("run", str(tmp_path / "in"), "-o", str(out), *args, "--continue-on-error", "--json")
    assert_one_line_error(done, 2, *words)
    assert done.stderr.startswith("oxi: error: ") and str(tmp_path) not in done.stderr  # the option's, no file's
    assert done.stdout == "" and not out.exists()


def test_a_codec_one_of_the_output_formats_lacks_stops_the_batch_before_the_others_are_written(tmp_path: Path):
    folder = tmp_path / "in"
    exr_folder(folder, ["a.exr", "b.exr"])
    _pngs(folder, ["c.png"])
    done = run_oxi("run", str(folder), "-o", str(tmp_path / "out"), "--compression", "piz")
    assert_one_line_error(done, 2, "--compression applies to EXR and TIFF outputs, not PNG")
    assert not (tmp_path / "out").exists()


def test_the_codec_is_checked_once_per_output_format_and_each_file_writes_its_bytes(tmp_path: Path, monkeypatch):
    folder = tmp_path / "in"
    exrs = exr_folder(folder, ["a.exr", "b.exr"])
    tiffs = [folder / "c.tif", folder / "d.tif"]
    for png, tiff in zip(_pngs(tmp_path, ["c.png", "d.png"]), tiffs, strict=True):
        io.write_image(io.read_image(png), tiff)
    checked: list[str] = []
    real = io.output_codec
    monkeypatch.setattr(io, "output_codec", lambda fmt, *args: checked.append(fmt) or real(fmt, *args))
    results = oxi.process(folder, tmp_path / "out", [], compression="zip", backend="cpu", jobs=2)
    assert [r.status for r in results] == ["ok"] * 4
    assert sorted(checked) == ["exr", "tiff"]
    for src in [*exrs, *tiffs]:
        want = tmp_path / f"want{src.suffix}"
        io.write_image(io.read_image(src), want, compression="zip")
        assert filecmp.cmp(tmp_path / "out" / src.name, want, shallow=False), src.name


def test_a_jpeg_quality_reaches_every_file_as_its_codec(tmp_path: Path):
    folder = tmp_path / "in"
    folder.mkdir()
    pngs = _pngs(folder, ["a.png", "b.png"])
    results = oxi.process(folder, tmp_path / "out/", oxi.Chain(settings={"quality": 40}), name="{stem}.jpg",
                          backend="cpu")
    assert [r.status for r in results] == ["ok", "ok"]
    for png in pngs:
        want = tmp_path / "want.jpg"
        io.write_image(io.read_image(png), want, compression="jpeg:40")
        assert filecmp.cmp(tmp_path / "out" / f"{png.stem}.jpg", want, shallow=False), png.name
