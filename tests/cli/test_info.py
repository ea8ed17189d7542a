"""`oxi info`: header facts, and statistics streamed in bands that equal whole-image numpy statistics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from oxi_cli.info import channel_stats, describe
from tests.cli.conftest import hdr_rgba, run_oxi, write_exr


def expected_stats(values: np.ndarray) -> dict:
    v = values.astype(np.float64).ravel()
    finite = v[np.isfinite(v)]
    return {"min": finite.min(), "max": finite.max(), "mean": finite.mean(), "nan": int(np.isnan(v).sum()),
            "pos_inf": int((v == np.inf).sum()), "neg_inf": int((v == -np.inf).sum()), "count": v.size}


def check(got: dict, want: dict) -> None:
    for key in ("nan", "pos_inf", "neg_inf", "count", "min", "max"):
        assert got[key] == want[key], key
    assert got["mean"] == pytest.approx(want["mean"], rel=1e-9)


@pytest.fixture
def tiled(tmp_path: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """Tiled float EXR, offset data window inside a larger display window, NaN/Inf, a uint32 ID channel."""
    rng = np.random.default_rng(5)
    rgb = (rng.lognormal(0, 2, (45, 70, 3)) * rng.choice([-1, 1], (45, 70, 3))).astype(np.float32)
    rgb[rng.random(rgb.shape) < 0.02] = np.nan
    rgb[rng.random(rgb.shape) < 0.01] = np.inf
    rgb[rng.random(rgb.shape) < 0.01] = -np.inf
    ids = rng.integers(2**24, 2**32 - 1, (45, 70), dtype=np.uint32)  # beyond float32's exact integers
    planes = {"R": rgb[..., 0].copy(), "G": rgb[..., 1].copy(), "B": rgb[..., 2].copy(), "id": ids}
    tiles = OpenEXR.TileDescription()
    tiles.xSize, tiles.ySize = 16, 8
    header = {
        "compression": OpenEXR.PIZ_COMPRESSION,
        "type": OpenEXR.tiledimage,
        "tiles": tiles,
        "dataWindow": (np.array([10, 20], np.int32), np.array([79, 64], np.int32)),
        "displayWindow": (np.array([0, 0], np.int32), np.array([99, 99], np.int32)),
        "shot": "sh010",
    }
    path = tmp_path / "tiled.exr"
    OpenEXR.File(header, dict(planes)).write(str(path))  # the binding turns the dict's arrays into Channels
    return path, planes


def test_describe_reports_tiles_windows_types_and_attributes(tiled):
    path, _ = tiled
    doc = describe(path)
    assert (doc["format"], doc["width"], doc["height"]) == ("exr", 70, 45)
    assert {c["name"]: c["type"] for c in doc["channels"]} == {"R": "float", "G": "float", "B": "float",
                                                                "id": "uint32"}
    assert doc["compression"] == "piz" and doc["storage"] == "tiled"
    assert doc["tiles"]["width"] == 16 and doc["tiles"]["height"] == 8
    assert doc["data_window"] == [[10, 20], [79, 64]] and doc["display_window"] == [[0, 0], [99, 99]]
    assert doc["attributes"]["shot"] == "sh010"
    json.dumps(doc)  # every value is plain JSON


@pytest.mark.parametrize("band_rows", [None, 1, 7, 1000])
def test_banded_stats_equal_whole_image_numpy(tiled, band_rows):
    path, planes = tiled
    (stats,) = channel_stats(path, band_rows=band_rows)
    for name, values in planes.items():
        check(stats[name], expected_stats(values))


def test_png_stats_are_in_the_0_to_1_range_oxi_processes(tmp_path: Path):
    from oxi_cli.image import Image, ImageMeta
    from oxi_cli.io import write_image

    data = np.random.default_rng(1).integers(0, 65536, (9, 11, 3), dtype=np.uint16)
    path = tmp_path / "p.png"
    planes = {c: np.ascontiguousarray(data[..., i]) for i, c in enumerate("RGB")}
    write_image(Image(11, 9, planes, ImageMeta("png", dict.fromkeys("RGB", "uint16"))), path)
    (stats,) = channel_stats(path)
    got, want = stats["G"], expected_stats(data[..., 1] / 65535.0)
    assert got["min"] == pytest.approx(want["min"]) and got["max"] == pytest.approx(want["max"])
    assert got["mean"] == pytest.approx(want["mean"], rel=1e-6) and 0.0 <= got["min"] <= got["max"] <= 1.0


def test_info_command_json_and_text(tmp_path: Path, tiled):
    path, planes = tiled
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(12, 16), shot="sh020")
    res = run_oxi("info", str(path), str(plate), "--stats", "--json")
    assert res.returncode == 0, res.stderr
    docs = [json.loads(line) for line in res.stdout.splitlines()]
    assert [Path(d["path"]).name for d in docs] == ["tiled.exr", "plate.exr"]
    check(docs[0]["stats"]["R"], expected_stats(planes["R"]))
    assert docs[1]["attributes"]["shot"] == "sh020" and docs[1]["error"] is None
    text = run_oxi("info", str(path), "--stats")
    assert text.returncode == 0, text.stderr
    for words in ("tiled 16x8", "data window", "(10, 20) - (79, 64)", "R, G, B (float); id (uint32)", "NaN", "shot"):
        assert words in text.stdout, words


def test_info_reports_a_bad_file_in_one_line_and_still_shows_the_others(tmp_path: Path):
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(12, 16))
    res = run_oxi("info", str(tmp_path / "nope.exr"), str(plate))
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [f"oxi: error: {tmp_path / 'nope.exr'}: no such file; check the path"]
    assert "plate.exr" in res.stdout and "channels" in res.stdout
