"""Same build means same code: a call names its service's build by oxi's installation (a stat or two, no source
file), and the service exits as soon as code it runs changes on disk, oxi's own or a package it imported."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy
import pytest

import oxi_cli
from oxi_cli.service import control, paths
from tests.cli.conftest import OXI, hdr_rgba, write_exr

OXI_CMD = [OXI] if OXI else [sys.executable, "-m", "oxi_cli"]


def oxi(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*OXI_CMD, *args], env=env, capture_output=True, timeout=300)


@pytest.mark.parametrize("changed", [Path(numpy.__file__), Path(oxi_cli.__file__).parent / "ops" / "cdl.py"],
                         ids=["numpy", "oxi"])
def test_a_file_the_service_runs_that_changes_ends_it_and_the_next_call_runs_the_new_code(tmp_path, changed):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "OXI_SERVER": "on", "OXI_BACKEND": "cpu",
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    plate = write_exr(tmp_path / "plate.exr", hdr_rgba(37, 53), shot="sh010")
    before = os.stat(changed)
    try:
        assert oxi(env, "cdl", str(plate), str(tmp_path / "a.exr"), "--slope", "1.1").returncode == 0
        first = control.status(env)
        assert first["running"] and first["jobs_served"] == 1
        os.utime(changed, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))  # as an edit in place would
        deadline = time.monotonic() + 60
        while control.status(env).get("pid") == first["pid"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert control.status(env).get("pid") != first["pid"], f"the service went on after {changed} changed"
        done = oxi(env, "cdl", str(plate), str(tmp_path / "b.exr"), "--slope", "1.1")
        assert done.returncode == 0, done.stderr
        second = control.status(env)
        assert second["running"] and second["pid"] != first["pid"] and second["jobs_served"] == 1
    finally:
        oxi(env, "server", "stop")
        os.utime(changed, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_the_build_key_names_the_installation_not_each_source(tmp_path):
    """A call stats oxi's installed metadata, not every source (the service watches those); a reinstall, which
    rewrites RECORD, is another build."""
    source = Path(oxi_cli.__file__).parent / "ops" / "cdl.py"
    record = Path(paths.dist_info()) / "RECORD"
    key = paths.build_key()
    before = os.stat(source)
    try:
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
        assert paths.build_key() == key
    finally:
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    was = os.stat(record)
    try:
        os.utime(record, ns=(was.st_atime_ns, was.st_mtime_ns + 10**9))
        assert paths.build_key() != key
    finally:
        os.utime(record, ns=(was.st_atime_ns, was.st_mtime_ns))


def test_version_is_the_installed_metadatas():
    done = oxi({**os.environ, "OXI_SERVER": "off"}, "--version")
    assert done.returncode == 0 and done.stdout.decode().split() == ["oxi", importlib.metadata.version("oxi")]
