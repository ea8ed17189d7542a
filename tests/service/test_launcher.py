"""The installed `oxi` command (bin/oxi) as pip puts it in a new environment: it reaches the service without site's
start-up files, runs a job of its own with them, and is `oxi` in every line it prints."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import hdr_rgba, write_exr
from tests.installed import install_wheel, purelib

# A start-up file of the new environment's that leaves a mark when site runs it (as numba-cuda's .pth runs code).
MARK_PTH = 'import os; os.environ.get("OXI_TEST_SITE_MARK") and open(os.environ["OXI_TEST_SITE_MARK"], "a").close()\n'

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the launcher is a POSIX shell script")


@pytest.fixture(scope="module")
def installed(oxi_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """oxi installed from a wheel in a new environment, with a start-up file that marks each run of site."""
    venv = install_wheel(oxi_wheel, tmp_path_factory.mktemp("launcher"))
    (purelib(venv) / "zz_mark.pth").write_text(MARK_PTH)
    return venv


@pytest.fixture(scope="module")
def env(installed: Path, tmp_path_factory: pytest.TempPathFactory):
    """A runtime folder of this module's own, so its service is this module's; stopped at the end."""
    run = tmp_path_factory.mktemp("runtime")
    run.chmod(0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_BACKEND": "cpu", "COLUMNS": "200"}
    env.pop("OXI_SERVER", None)
    env.pop("PYTHONPATH", None)  # the tree's own oxi_cli must not stand in for the installed one
    yield env
    subprocess.run([installed / "bin" / "oxi", "server", "stop"], env=env, capture_output=True, timeout=60)


def oxi(installed: Path, env: dict, *args: object) -> subprocess.CompletedProcess:
    return subprocess.run([installed / "bin" / "oxi", *map(str, args)], env=env, capture_output=True, timeout=300,
                          cwd=installed.parent)


def test_the_installed_command_is_a_launcher_beside_the_interpreters_console_script(installed):
    launcher = (installed / "bin" / "oxi").read_text()
    assert launcher.startswith("#!/bin/sh\n")
    assert (installed / "bin" / "oxi-python").read_text().startswith(f"#!{installed / 'bin' / 'python'}")


def test_a_served_call_starts_without_site_and_a_call_of_its_own_with_it(installed, env, tmp_path):
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(37, 53))
    started = oxi(installed, env, "server", "start")
    assert started.returncode == 0 and b"running" in started.stdout, started.stderr
    outputs = {}
    for mode in ("on", "off"):
        mark = tmp_path / f"site-ran-{mode}"
        out = tmp_path / f"out-{mode}.exr"
        done = oxi(installed, {**env, "OXI_SERVER": mode, "OXI_TEST_SITE_MARK": str(mark)},
                   "cdl", plate, out, "--slope", "1.1,1,0.9")
        assert done.returncode == 0, done.stderr
        outputs[mode] = (out.read_bytes(), mark.exists())
    assert outputs["on"][0] == outputs["off"][0]
    assert outputs["on"][1] is False  # the served call never ran site's start-up files
    assert outputs["off"][1] is True  # a job of its own runs with them, as a plain interpreter would


@pytest.mark.parametrize("mode", ["on", "off"])
def test_usage_lines_name_the_command_oxi(installed, env, mode):
    done = oxi(installed, {**env, "OXI_SERVER": mode}, "cdl", "--help")
    assert done.returncode == 0, done.stderr
    assert b"Usage: oxi cdl" in done.stdout


def test_a_package_only_site_reaches_runs_through_site(installed, env, tmp_path):
    """An install the launcher cannot find without site (here: its folder named only by a .pth file) still runs."""
    site = purelib(installed)
    (tmp_path / "pkg").mkdir()
    (site / "oxi_cli").rename(tmp_path / "pkg" / "oxi_cli")
    try:
        (site / "moved.pth").write_text(f"{tmp_path / 'pkg'}\n")
        mark = tmp_path / "site-ran"
        done = oxi(installed, {**env, "OXI_TEST_SITE_MARK": str(mark)}, "--version")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(b"oxi ") and mark.exists()
    finally:
        (site / "moved.pth").unlink(missing_ok=True)
        (tmp_path / "pkg" / "oxi_cli").rename(site / "oxi_cli")


def test_an_install_whose_path_has_a_space_starts_the_client_without_site(oxi_wheel, tmp_path):
    """pip then writes oxi-python as a shell trampoline (no #! line holds the path): the launcher reads the
    interpreter from its exec line."""
    venv = install_wheel(oxi_wheel, tmp_path / "with space")
    assert (venv / "bin" / "oxi-python").read_text().startswith("#!/bin/sh\n")
    (purelib(venv) / "zz_mark.pth").write_text(MARK_PTH)
    run = tmp_path / "runtime"
    run.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "COLUMNS": "200"}
    env.pop("PYTHONPATH", None)
    try:
        assert oxi(venv, env, "server", "start").returncode == 0
        mark = tmp_path / "site-ran"
        done = oxi(venv, {**env, "OXI_TEST_SITE_MARK": str(mark)}, "--version")
        assert done.returncode == 0 and done.stdout.startswith(b"oxi "), done.stderr
        assert not mark.exists()
    finally:
        subprocess.run([venv / "bin" / "oxi", "server", "stop"], env=env, capture_output=True, timeout=60)
