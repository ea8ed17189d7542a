"""Files as studios write them: every part of a multi-part EXR, every view of a multi-view one, mip-mapped textures."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from tests.cli.conftest import hdr_rgba, run_oxi
from tests.io.files import assert_same_planes, box, read_exr, read_exr_parts, window

DISPLAY = box(0, 0, 63, 47)


def _rgba(height: int, width: int, seed: int) -> dict[str, np.ndarray]:
    rgba = hdr_rgba(height, width, seed)
    return {c: np.ascontiguousarray(rgba[..., i]).astype(np.float16) for i, c in enumerate("RGBA")}


def _headers() -> list[dict]:
    return [
        {"compression": OpenEXR.ZIP_COMPRESSION, "displayWindow": DISPLAY, "view": "right", "shot": "sh010"},
        {"compression": OpenEXR.PIZ_COMPRESSION, "displayWindow": DISPLAY, "dataWindow": box(4, 2, 59, 41),
         "view": "left", "shot": "sh010"},
        {"compression": OpenEXR.ZIPS_COMPRESSION, "displayWindow": DISPLAY},
    ]


@pytest.fixture
def stereo(tmp_path: Path) -> Path:
    """A stereo render as Nuke writes it: one part per eye (the left with its own data window and codec) and a
    depth part of float Z."""
    names = ["rgba_right", "rgba_left", "depth"]
    planes = [_rgba(48, 64, 1), _rgba(40, 56, 2), {"Z": np.linspace(0, 9, 48 * 64, dtype=np.float32).reshape(48, 64)}]
    parts = [OpenEXR.Part(h, dict(p), n) for h, p, n in zip(_headers(), planes, names, strict=True)]
    path = tmp_path / "stereo.exr"
    OpenEXR.File(parts).write(str(path))
    return path


def _alone(tmp_path: Path, stereo: Path, index: int) -> Path:
    """Part `index` of the stereo file as a one-part file of its own, header and pixels as they are."""
    name, header, planes = read_exr_parts(stereo)[index]
    header = {k: v for k, v in header.items() if k not in ("name", "chunkCount", "channels")}
    path = tmp_path / f"alone{index}.exr"
    OpenEXR.File({**header, "type": OpenEXR.scanlineimage}, planes).write(str(path))
    return path


@pytest.mark.parametrize("args", [["cdl", "--slope", "1.1,1,0.9", "--power", "1.2"], ["resize", "--scale", "50%"]])
def test_every_part_is_processed_as_the_same_part_alone_would_be(tmp_path: Path, stereo: Path, args: list[str]):
    command, *flags = args
    out = tmp_path / "out.exr"
    run = run_oxi(command, str(stereo), str(out), *flags)
    assert run.returncode == 0, run.stderr
    got = read_exr_parts(out)
    assert [name for name, _, _ in got] == ["rgba_right", "rgba_left", "depth"]
    for index, (_, header, planes) in enumerate(got):
        if command == "cdl" and index == 2:  # the depth part holds no colour: see the next test
            continue
        single = tmp_path / f"single{index}.exr"
        assert run_oxi(command, str(_alone(tmp_path, stereo, index)), str(single), *flags).returncode == 0
        want_header, want = read_exr(single)
        assert_same_planes(planes, want)
        assert window(header["dataWindow"]) == window(want_header["dataWindow"])
        assert header["compression"] == want_header["compression"] == _headers()[index]["compression"]
        assert header.get("view") == _headers()[index].get("view")
    displays = {window(header["displayWindow"]) for _, header, _ in got}
    assert displays == ({(0, 0, 63, 47)} if command == "cdl" else {(0, 0, 31, 23)})


def test_a_colour_op_leaves_a_part_without_rgb_untouched(tmp_path: Path, stereo: Path):
    out = tmp_path / "out.exr"
    assert run_oxi("cdl", str(stereo), str(out), "--slope", "2").returncode == 0
    assert_same_planes(read_exr_parts(out)[2][2], read_exr_parts(stereo)[2][2])


@pytest.mark.parametrize("part", ["rgba_left", "1"])
def test_part_processes_one_part_by_name_or_index_and_writes_it_alone(tmp_path: Path, stereo: Path, part: str):
    out = tmp_path / "left.exr"
    run = run_oxi("cdl", str(stereo), str(out), "--slope", "1.1", "--part", part)
    assert run.returncode == 0, run.stderr
    single = tmp_path / "single.exr"
    assert run_oxi("cdl", str(_alone(tmp_path, stereo, 1)), str(single), "--slope", "1.1").returncode == 0
    parts = read_exr_parts(out)
    assert len(parts) == 1
    assert_same_planes(parts[0][2], read_exr(single)[1])
    assert window(parts[0][1]["dataWindow"]) == (4, 2, 59, 41)


def test_an_unknown_part_is_refused_listing_the_parts(tmp_path: Path, stereo: Path):
    run = run_oxi("cdl", str(stereo), str(tmp_path / "o.exr"), "--slope", "1.1", "--part", "rgba_centre")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        f"oxi: error: {stereo}: --part rgba_centre: no such part; this file's parts: 0 rgba_right, 1 rgba_left, "
        "2 depth"
    ]
    assert not (tmp_path / "o.exr").exists()


def test_streaming_a_multi_part_file_is_refused_saying_why(tmp_path: Path, stereo: Path):
    run = run_oxi("blur", str(stereo), str(tmp_path / "o.exr"), "--sigma", "2", "--strategy", "streaming")
    assert run.returncode == 2
    assert "multi-part file (3 parts) is processed in one pass" in run.stderr


def test_info_lists_every_part(stereo: Path):
    run = run_oxi("info", str(stereo), "--json")
    doc = json.loads(run.stdout)
    assert [(p["index"], p["name"], p["view"], p["width"], p["height"]) for p in doc["parts"]] == [
        (0, "rgba_right", "right", 64, 48), (1, "rgba_left", "left", 56, 40), (2, "depth", None, 64, 48)]
    assert [p["compression"] for p in doc["parts"]] == ["zip", "piz", "zips"]
    shown = run_oxi("info", str(stereo)).stdout
    assert "3 parts" in shown and "part 1 rgba_left (view left)" in shown and "part 2 depth" in shown


# --- views and layers in one part ------------------------------------------------------------------------------


@pytest.fixture
def multiview(tmp_path: Path) -> Path:
    """A one-part stereo file: the default view's R, G, B, A, the right view's right.*, and a diffuse AOV."""
    channels = {**_rgba(24, 32, 3), **{f"right.{c}": p for c, p in _rgba(24, 32, 4).items()}}
    channels.update({f"diffuse.{c}": p for c, p in _rgba(24, 32, 5).items() if c != "A"})
    path = tmp_path / "mv.exr"
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage, "multiView": ["left", "right"]}
    OpenEXR.File(header, channels).write(str(path))
    return path


def _graded(tmp_path: Path, src: Path, *extra: str) -> tuple[dict, dict]:
    out = tmp_path / "graded.exr"
    run = run_oxi("cdl", str(src), str(out), "--slope", "2", "--overwrite", *extra)
    assert run.returncode == 0, run.stderr
    return read_exr(src)[1], read_exr(out)[1]


def _doubled(before: dict, after: dict) -> set[str]:
    return {name for name in before if not np.array_equal(before[name], after[name])
            and np.allclose(after[name].astype(np.float32), 2 * before[name].astype(np.float32), rtol=2e-3)}


def test_a_multi_view_file_grades_every_view_and_leaves_other_layers(tmp_path: Path, multiview: Path):
    before, after = _graded(tmp_path, multiview)
    assert _doubled(before, after) == {"R", "G", "B", "right.R", "right.G", "right.B"}
    for name in ("A", "right.A", "diffuse.R", "diffuse.G", "diffuse.B"):
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)


def test_layers_adds_and_leaves_out_layers_by_name(tmp_path: Path, multiview: Path):
    before, after = _graded(tmp_path, multiview, "--layers=diffuse,-right")
    assert _doubled(before, after) == {"R", "G", "B", "diffuse.R", "diffuse.G", "diffuse.B"}
    before, after = _graded(tmp_path, multiview, "--layers", "all")
    assert {n[-1] for n in _doubled(before, after)} == {"R", "G", "B"} and len(_doubled(before, after)) == 9


def test_a_layer_name_the_file_lacks_is_refused_naming_those_it_has(tmp_path: Path, multiview: Path):
    run = run_oxi("cdl", str(multiview), str(tmp_path / "o.exr"), "--slope", "2", "--layers", "difuse")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "oxi: error: --layers names difuse, which this file does not hold; its layers: diffuse, left, right"]


# --- mip-mapped textures ----------------------------------------------------------------------------------------


@pytest.fixture
def texture(tmp_path: Path) -> Path:
    src = tmp_path / "flat.exr"
    OpenEXR.File({"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage},
                 _rgba(32, 32, 6)).write(str(src))
    oiiotool = shutil.which("oiiotool")
    assert oiiotool, "oiiotool (the test extras' openimageio) makes the mip-mapped file"
    subprocess.run([oiiotool, str(src), "--tile", "16", "16", "-otex", str(tmp_path / "tex.exr")], check=True)
    return tmp_path / "tex.exr"


def test_a_mip_mapped_input_is_refused_rather_than_losing_its_levels(tmp_path: Path, texture: Path):
    run = run_oxi("cdl", str(texture), str(tmp_path / "o.exr"), "--slope", "2")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "mipmap-mapped" not in lines[0]
    assert "the input is mip-mapped and oxi writes one level: pass --mip-level 0" in lines[0]
    assert not (tmp_path / "o.exr").exists()


def test_mip_level_0_processes_the_top_level_into_a_one_level_file(tmp_path: Path, texture: Path):
    out = tmp_path / "o.exr"
    run = run_oxi("cdl", str(texture), str(out), "--slope", "2", "--mip-level", "0")
    assert run.returncode == 0, run.stderr
    header, planes = read_exr(out)
    assert header["tiles"].mode == OpenEXR.ONE_LEVEL
    _, top = read_exr(texture)
    np.testing.assert_allclose(planes["R"].astype(np.float32), 2 * top["R"].astype(np.float32), rtol=2e-3)
