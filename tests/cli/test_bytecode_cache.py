"""Where an installation keeps no bytecode, the `oxi` command compiles its imports once into oxi's cache."""

from __future__ import annotations

import compileall
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oxi_cli import bytecode

TAG = sys.implementation.cache_tag


def source_package(root: Path, name: str) -> Path:
    """A package on disk with source only, as uv or a stripped image installs it."""
    pkg = root / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("VALUE = 42\n")
    return pkg


def run_python(code: str, root: Path, cache: Path, **env: str) -> subprocess.CompletedProcess:
    """A fresh interpreter that may not write bytecode beside sources, `root` first on its path."""
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPYCACHEPREFIX", bytecode.OPT_OUT)}
    environ.update(PYTHONPATH=os.pathsep.join([str(root), *sys.path]), PYTHONDONTWRITEBYTECODE="1",
                   XDG_CACHE_HOME=str(cache), **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120)


def test_a_package_without_bytecode_that_python_may_not_write_is_missing(tmp_path, monkeypatch):
    source_package(tmp_path, "plainpkg")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert bytecode.missing(("plainpkg",)) == ["plainpkg"]


def test_a_package_with_its_own_bytecode_is_not_missing(tmp_path, monkeypatch):
    pkg = source_package(tmp_path, "compiledpkg")
    assert compileall.compile_dir(str(pkg), quiet=2)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert bytecode.missing(("compiledpkg",)) == []


def test_a_package_python_will_write_bytecode_for_is_not_missing(tmp_path, monkeypatch):
    source_package(tmp_path, "writablepkg")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert bytecode.missing(("writablepkg",)) == []


def test_bytecode_is_compiled_once_into_oxis_cache_and_read_back(tmp_path):
    pkg = source_package(tmp_path / "site", "plainpkg")
    code = ("from oxi_cli.bytecode import use_own_cache\n"
            "print(use_own_cache(('plainpkg',)))\n"
            "import plainpkg; assert plainpkg.VALUE == 42\n")
    first = run_python(code, tmp_path / "site", tmp_path / "cache")
    assert first.returncode == 0, first.stderr
    folder = Path(first.stdout.strip())
    assert folder == tmp_path / "cache" / "oxi" / "pycache"
    cached = folder / pkg.relative_to(pkg.anchor) / f"__init__.{TAG}.pyc"
    assert cached.is_file()
    assert not (pkg / "__pycache__").exists()  # nothing written beside the source
    written = cached.stat().st_mtime_ns
    second = run_python(code, tmp_path / "site", tmp_path / "cache")
    assert second.returncode == 0, second.stderr
    assert cached.stat().st_mtime_ns == written  # read back, not compiled again


@pytest.mark.parametrize("env", [{"PYTHONPYCACHEPREFIX": "user"}, {bytecode.OPT_OUT: "0"}],
                         ids=["users-prefix-wins", "opted-out"])
def test_the_cache_stays_off_when_the_user_says_so(tmp_path, env):
    source_package(tmp_path / "site", "plainpkg")
    if "PYTHONPYCACHEPREFIX" in env:
        env = {"PYTHONPYCACHEPREFIX": str(tmp_path / "user")}
    code = ("import sys; from oxi_cli.bytecode import use_own_cache\n"
            "print(use_own_cache(('plainpkg',)), sys.pycache_prefix)")
    done = run_python(code, tmp_path / "site", tmp_path / "cache", **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", env.get("PYTHONPYCACHEPREFIX", "None")]


def test_the_oxi_command_switches_to_the_cache_and_probe_says_so(tmp_path):
    # A source-only `numba` shadowing the real one: the command decides from where numba's bytecode would be,
    # before anything imports it (probe --json never does).
    source_package(tmp_path / "site", "numba")
    code = "import runpy, sys; sys.argv = ['oxi', 'probe', '--json']; runpy.run_module('oxi_cli', run_name='__main__')"
    done = run_python(code, tmp_path / "site", tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)["bytecode"]
    assert doc["source"] == "oxi cache"
    assert doc["prefix"] == str(tmp_path / "cache" / "oxi" / "pycache")
    assert "numba" in doc["installation_lacks"]


def test_a_cache_folder_others_may_write_into_is_not_used(tmp_path):
    source_package(tmp_path / "site", "plainpkg")
    shared = tmp_path / "cache" / "oxi" / "pycache"
    shared.mkdir(parents=True)
    shared.chmod(0o777)
    code = "from oxi_cli.bytecode import use_own_cache; print(use_own_cache(('plainpkg',)))"
    done = run_python(code, tmp_path / "site", tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None"]


def test_the_cache_folder_is_created_for_this_user_alone(tmp_path):
    source_package(tmp_path / "site", "plainpkg")
    code = "from oxi_cli.bytecode import use_own_cache; print(use_own_cache(('plainpkg',)))"
    done = run_python(code, tmp_path / "site", tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    assert (Path(done.stdout.strip()).stat().st_mode & 0o777) == 0o700
