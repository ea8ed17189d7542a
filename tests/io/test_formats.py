"""File formats describe themselves (io/formats.py): a new one is its module and one registration line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oxi_cli.io import formats
from tests.cli.conftest import read_exr, write_exr


def test_every_registered_format_has_its_required_functions():
    for fmt in formats.FORMATS.values():
        for role in formats.REQUIRED:
            assert callable(fmt.function(role)), (fmt.name, role)
        assert fmt.stores and fmt.extensions
        if fmt.regions:
            for role in ("region_blocker", "band_header"):
                assert callable(fmt.function(role)), (fmt.name, role)


@pytest.fixture
def npy_format():
    fmt = formats.register(formats.Format(
        "npy", "NPY", (".npy",), ("float",), keeps_windows=False,
        roles={role: f"tests.io.npy_format:{role}" for role in ("read", "read_spec", "write", "codec")},
    ))
    yield fmt
    formats.unregister("npy")


def _oxi(*args: str) -> int:
    from oxi_cli.cli.main import app

    try:
        return app(args=list(args), prog_name="oxi", standalone_mode=False) or 0
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1


def test_a_registered_format_is_read_planned_and_written_by_the_generic_code(npy_format, tmp_path: Path,
                                                                             monkeypatch):
    monkeypatch.setenv("OXI_BACKEND", "cpu")
    rgba = np.random.default_rng(1).uniform(0, 2, (9, 13, 4)).astype(np.float32)
    np.save(tmp_path / "in.npy", rgba)
    assert _oxi("cdl", str(tmp_path / "in.npy"), str(tmp_path / "out.exr"), "--slope", "2") == 0
    _, planes = read_exr(tmp_path / "out.exr")
    assert planes["R"].dtype == np.float32  # the format stores float: the EXR keeps it
    np.testing.assert_allclose(planes["R"], rgba[..., 0] * 2, rtol=1e-6)
    np.testing.assert_array_equal(planes["A"], rgba[..., 3])
    assert _oxi("resize", str(tmp_path / "out.exr"), str(tmp_path / "small.npy"), "--scale", "50%",
                "--out-type", "float") == 0
    assert np.load(tmp_path / "small.npy").shape == (5, 7, 4)  # 13x9 at 50% is 7x5: halves round up, as oiiotool


def test_an_unregistered_extension_is_refused_naming_the_known_ones(tmp_path: Path):
    src = write_exr(tmp_path / "in.exr", np.ones((4, 4, 4), np.float32), aovs=False)
    with pytest.raises(Exception, match=r"\.npy.*not an image format oxi knows; use \.exr, \.png"):
        from oxi_cli.io import format_for

        format_for(src.with_suffix(".npy"))
