"""Where the CPU kernels are cached: the user's own folder per key, or a shared OXI_KERNEL_CACHE used only when
it is this user's, or read-only and complete; never one built for another key or that others may write into."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from oxi_cli import kernel_cache


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty user cache and no OXI_KERNEL_CACHE; kernel_cache looks again (and again after the test)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.delenv(kernel_cache.ENV, raising=False)
    kernel_cache.location.cache_clear()
    yield tmp_path
    kernel_cache.location.cache_clear()


def _shared(monkeypatch: pytest.MonkeyPatch, root: Path) -> Path:
    root.mkdir(mode=0o755, exist_ok=True)
    monkeypatch.setenv(kernel_cache.ENV, str(root))
    kernel_cache.location.cache_clear()
    return root / kernel_cache.key()


def _built(folder: Path, complete: bool) -> None:
    """A cache folder as `oxi probe --compile` leaves it (its manifest; the kernels' files do not matter here)."""
    folder.mkdir(mode=0o755, parents=True)
    manifest = {"key": kernel_cache.key(), "modules": {m: {"seconds": 1.0} for m in kernel_cache.modules()},
                "complete": complete}
    (folder / kernel_cache.MANIFEST).write_text(json.dumps(manifest))


def _read_only(folder: Path) -> None:
    for path in (*folder.rglob("*"), folder):
        path.chmod(stat.S_IMODE(path.stat().st_mode) & ~0o222)


def test_kernels_cache_in_the_users_own_folder_under_a_key_of_sources_versions_and_cpu(fresh):
    where = kernel_cache.location()
    assert where.origin == "user cache" and where.writable and where.note == ""
    assert where.path == fresh / "user-cache" / "oxi" / "kernels" / kernel_cache.key()
    assert stat.S_IMODE(where.path.stat().st_mode) & 0o077 == 0, "the user's cache is theirs alone"
    assert set(kernel_cache.key_parts()) == {"oxi", "sources", "numba", "llvmlite", "python", "cpu"}


def test_a_shared_folder_of_this_users_is_compiled_into(fresh, monkeypatch):
    folder = _shared(monkeypatch, fresh / "farm")
    where = kernel_cache.location()
    assert (where.path, where.writable, where.origin) == (folder, True, kernel_cache.ENV)


def test_a_read_only_shared_cache_is_used_when_complete_and_ignored_when_not(fresh, monkeypatch):
    folder = _shared(monkeypatch, fresh / "farm")
    _built(folder, complete=True)
    _read_only(folder)
    where = kernel_cache.location()
    assert (where.path, where.writable) == (folder, False)
    assert kernel_cache.compiled() == set(kernel_cache.modules())

    folder.chmod(0o755)
    _built(fresh / "farm2" / kernel_cache.key(), complete=False)
    _read_only(fresh / "farm2" / kernel_cache.key())
    _shared(monkeypatch, fresh / "farm2")
    where = kernel_cache.location()
    assert where.origin == "user cache" and "read-only and incomplete" in where.note


@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_shared_cache_other_users_may_write_into_is_refused(fresh, monkeypatch, what):
    if not hasattr(os, "getuid"):
        pytest.skip("mode bits do not say who may write on Windows")
    folder = _shared(monkeypatch, fresh / "farm")
    _built(folder, complete=True)
    target = folder if what == "folder" else folder / kernel_cache.MANIFEST
    target.chmod(stat.S_IMODE(target.stat().st_mode) | 0o002)
    where = kernel_cache.location()
    assert where.origin == "user cache" and where.path != folder
    assert "other users may write" in where.note


def test_a_cache_built_for_another_key_is_ignored_and_said_so(fresh, monkeypatch):
    root = fresh / "farm"
    _shared(monkeypatch, root)
    (root / "0123456789abcdef").mkdir()
    root.chmod(0o555)  # not this user's to compile into: only the other key's kernels are there
    try:
        where = kernel_cache.location()
        assert where.origin == "user cache"
        assert "0123456789abcdef" in where.note and kernel_cache.key() in where.note
    finally:
        root.chmod(0o755)
