"""End-to-end: the installed `oxi` command turns real EXR files into the numbers the references give."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import PyOpenColorIO as OCIO

from tests.cli.conftest import read_exr, run_oxi


def stacked(planes: dict[str, np.ndarray], names: str = "RGBA") -> np.ndarray:
    return np.stack([planes[c].astype(np.float32) for c in names], axis=-1)


def test_help_lists_every_command_with_examples():
    res = run_oxi("--help")
    assert res.returncode == 0
    for cmd in ("cdl", "lut3d", "matrix", "resize", "blur", "probe"):
        assert cmd in res.stdout
    sub = run_oxi("cdl", "--help")
    assert "Examples" in sub.stdout and "--slope" in sub.stdout


def test_module_entry_point_prints_version():
    res = run_oxi("--version", module=True)
    assert res.returncode == 0 and res.stdout.startswith("oxi ")


def test_cdl_matches_ocio_and_keeps_half_aovs_and_attributes(plate: Path, tmp_path: Path):
    out = tmp_path / "graded.exr"
    res = run_oxi("cdl", str(plate), str(out), "--slope", "1.1,0.9,1.2", "--offset", "0.01",
                  "--power", "1.2,1.0,0.8", "--sat", "0.9")
    assert res.returncode == 0, res.stderr
    in_header, src = read_exr(plate)
    header, planes = read_exr(out)
    assert header["shot"] == "sh010" and header["exposure"] == in_header["exposure"]
    assert header["compression"] == in_header["compression"]
    assert all(p.dtype == np.float16 for p in planes.values())
    for c in "RGB":  # AOVs and alpha pass through bit for bit
        np.testing.assert_array_equal(planes[f"diffuse.{c}"], src[f"diffuse.{c}"])
    np.testing.assert_array_equal(planes["A"], src["A"])
    cdl = OCIO.CDLTransform()
    cdl.setSlope([1.1, 0.9, 1.2]), cdl.setOffset([0.01] * 3), cdl.setPower([1.2, 1.0, 0.8]), cdl.setSat(0.9)
    cdl.setStyle(OCIO.CDL_NO_CLAMP)
    proc = OCIO.Config.CreateRaw().getProcessor(cdl).getOptimizedCPUProcessor(OCIO.OPTIMIZATION_LOSSLESS)
    expected = np.ascontiguousarray(stacked(src, "RGB"))
    proc.applyRGB(expected)
    # The output is half: within one half-float rounding of OCIO's float result.
    np.testing.assert_array_equal(stacked(planes, "RGB"), expected.astype(np.float16).astype(np.float32))


def test_matrix_3x4_from_cli_adds_the_last_column(plate: Path, tmp_path: Path):
    out = tmp_path / "m.exr"
    m = "0.9,0.1,0,0.01, 0,1,0,0.02, 0.05,0,0.95,-0.03"
    assert run_oxi("matrix", str(plate), str(out), "--matrix", m).returncode == 0
    _, src = read_exr(plate)
    _, dst = read_exr(out)
    rgb = stacked(src, "RGB").astype(np.float64)
    m34 = np.array([float(v) for v in m.split(",")]).reshape(3, 4)
    expected = rgb @ m34[:, :3].T + m34[:, 3]
    np.testing.assert_allclose(stacked(dst, "RGB"), expected.astype(np.float16).astype(np.float32),
                               rtol=1e-3, atol=1e-3)


def test_resize_to_width_keeps_aspect_and_every_channel(plate: Path, tmp_path: Path):
    out = tmp_path / "small.exr"
    assert run_oxi("resize", str(plate), str(out), "--width", "20", "--filter", "box").returncode == 0
    header, planes = read_exr(out)
    assert planes["R"].shape == (14, 20)  # 37 * 20 / 53 = 13.96
    assert set(planes) == {"R", "G", "B", "A", "diffuse.R", "diffuse.G", "diffuse.B"}
    lo, hi = header["dataWindow"]
    assert (hi - lo + 1).tolist() == [20, 14]


def test_blur_radius_means_sigma_of_a_third(plate: Path, tmp_path: Path):
    a, b = tmp_path / "a.exr", tmp_path / "b.exr"
    assert run_oxi("blur", str(plate), str(a), "--radius", "6").returncode == 0
    assert run_oxi("blur", str(plate), str(b), "--sigma", "2").returncode == 0
    np.testing.assert_array_equal(stacked(read_exr(a)[1]), stacked(read_exr(b)[1]))


def test_lut3d_identity_cube_leaves_pixels_within_half_precision(plate: Path, tmp_path: Path):
    n = 5
    grid = np.linspace(0.0, 1.0, n)
    b, g, r = np.meshgrid(grid, grid, grid, indexing="ij")
    rows = np.stack([r.ravel(), g.ravel(), b.ravel()], axis=1)
    cube = tmp_path / "id.cube"
    cube.write_text(f"LUT_3D_SIZE {n}\n" + "\n".join(" ".join(f"{v:.6f}" for v in row) for row in rows) + "\n")
    out = tmp_path / "l.exr"
    res = run_oxi("lut3d", str(plate), str(out), "--lut", str(cube))
    assert res.returncode == 0, res.stderr
    src = np.clip(stacked(read_exr(plate)[1], "RGB"), 0, 1)
    np.testing.assert_allclose(stacked(read_exr(out)[1], "RGB"), src, atol=1e-3)


def test_out_type_float_and_compression_override(plate: Path, tmp_path: Path):
    out = tmp_path / "f.exr"
    res = run_oxi("cdl", str(plate), str(out), "--sat", "0.5", "--out-type", "float", "--compression", "piz")
    assert res.returncode == 0, res.stderr
    header, planes = read_exr(out)
    assert all(p.dtype == np.float32 for p in planes.values())
    assert "PIZ" in str(header["compression"])


def test_writing_onto_the_input_needs_in_place(plate: Path):
    before = plate.read_bytes()
    res = run_oxi("cdl", str(plate), str(plate), "--sat", "0.5")
    assert res.returncode == 2 and "--in-place" in res.stderr
    assert plate.read_bytes() == before
    assert run_oxi("cdl", str(plate), str(plate), "--sat", "0.5", "--in-place").returncode == 0
    assert plate.read_bytes() != before
    assert [p.name for p in plate.parent.iterdir()] == [plate.name]  # no temporary left behind


def test_probe_json_lists_the_cpu_backend():
    res = run_oxi("probe", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert any(d.get("name") == "cpu" or d.get("kind") == "cpu" for d in doc["devices"])


def test_a_copy_never_loads_numba_and_a_grade_does(plate: Path, tmp_path: Path):
    import subprocess
    import sys

    def loads_numba(out: Path, slope: str) -> bool:
        # In a fresh interpreter; the pause lets a background import begin if anything started one.
        script = (
            "import sys, time\n"
            "from oxi_cli.cli.main import app\n"
            "try:\n"
            f"    app(['cdl', {str(plate)!r}, {str(out)!r}, '--slope', {slope!r}, '--backend', 'cpu'])\n"
            "except SystemExit as done:\n"
            "    assert not done.code, done.code\n"
            "time.sleep(0.5)\n"
            "print('numba' in sys.modules)\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().endswith("True")

    assert not loads_numba(tmp_path / "copy.exr", "1")
    assert loads_numba(tmp_path / "grade.exr", "1.2")
