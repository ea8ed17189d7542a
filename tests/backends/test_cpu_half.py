"""The CPU backend on half planes: conversions exact as numpy's, and the same results as the float32 path."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from oxi_cli.backends.cpu.backend import CpuBackend
from oxi_cli.backends.cpu.kernels import half
from oxi_cli.execute import MemorySink, MemorySource, execute
from oxi_cli.image import Image, ImageMeta
from oxi_cli.ops import Blur, Cdl, Lut3d, Matrix, Resize
from tests.reference import hdr_image


def _same_values(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Bit-for-bit, except that any NaN matches any NaN (a signalling NaN comes back quiet)."""
    view = np.uint16 if got.dtype == np.float16 else np.uint32
    nan = np.isnan(got) & np.isnan(want)
    bad = np.argwhere((got.view(view) != want.view(view)) & ~nan)
    if bad.size:
        first = tuple(int(i) for i in bad[0])
        raise AssertionError(f"{what}: {len(bad)} differ, first at {first}: {got[first]!r} vs {want[first]!r}")
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}: NaN positions differ"


def test_every_half_widens_exactly_as_numpy():
    bits = np.arange(1 << 16, dtype=np.uint16)
    got = np.empty(bits.shape, np.float32)
    half.convert(bits, got)
    _same_values(got, bits.view(np.float16).astype(np.float32), "half -> float32")


def test_floats_narrow_to_half_exactly_as_numpy():
    rng = np.random.default_rng(3)
    patterns = rng.integers(0, 1 << 32, 2_000_000, dtype=np.uint64).astype(np.uint32)
    # Ties between two halves, both sides of the largest half and of the subnormal range, Inf and NaN.
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    finite = halves[np.isfinite(halves)]
    ties = (np.sort(finite)[:-1].astype(np.float64) + np.diff(np.sort(finite).astype(np.float64)) / 2)
    edges = np.array([65504, 65519.99, 65520, 65536, 1e9, 2**-24, 2**-25, 2**-26, 3 * 2**-26, 6e-8,
                      np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
    values = np.concatenate([patterns.view(np.float32), ties.astype(np.float32), edges, -edges])
    got = np.empty(values.shape, np.uint16)
    half.convert(values, got)
    with np.errstate(over="ignore"):
        want = values.astype(np.float16)
    _same_values(got.view(np.float16), want, "float32 -> half")


def _half_image(shape: tuple[int, ...], seed: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return hdr_image(shape, seed=seed, nonfinite=True).astype(np.float16)


def _run(backend: CpuBackend, img: np.ndarray, chain: list, dtype: type, half_result: bool) -> np.ndarray:
    """The executor's path: planes of `dtype` in, the chain, planes of the stored type out."""
    from oxi_cli.execute import run_chain

    planes = [np.ascontiguousarray(img[..., c], dtype=dtype) for c in range(img.shape[2])]
    handle = run_chain(backend, planes, chain, img.shape[2] >= 4, adopt=True, half_result=half_result)
    return np.stack(backend.download_planes(handle, np.float16), axis=-1)


CHAINS = {
    "colour": [
        Cdl(slope=(1.1, 0.95, 1.2), offset=(0.01, -0.02, 0.0), power=(1.1, 0.9, 1.3), sat=0.85),
        Matrix.from_values(np.arange(16) * 0.05 + np.eye(4).ravel()),
        Lut3d(np.random.default_rng(1).uniform(-0.2, 1.5, (17, 17, 17, 3)).astype(np.float32)),
    ],
    "blur": [Blur(sigma=1.7)],
    "resize": [Resize(width=29, height=17, filter="lanczos3")],
    "blur then colour": [Blur(sigma=0.8), Cdl(slope=1.2, power=1.1, sat=0.9, style="asc")],
    "colour then resize": [Cdl(slope=0.8, power=1.3), Resize(width=61, height=40, filter="mitchell")],
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_half_planes_give_the_float32_result_rounded_to_half(cpu_backend, name):
    img = _half_image((37, 45, 4), seed=11)
    on_half = _run(cpu_backend, img, CHAINS[name], np.float16, half_result=True)
    on_float = _run(cpu_backend, img, CHAINS[name], np.float32, half_result=False)
    _same_values(on_half, on_float, f"{name} on half planes vs float32 planes")


def test_a_callers_image_is_never_computed_in(cpu_backend):
    img = _half_image((16, 20, 4), seed=2)
    planes = {c: np.ascontiguousarray(img[..., i]) for i, c in enumerate("RGBA")}
    before = {c: p.copy() for c, p in planes.items()}
    meta = ImageMeta(format="exr", pixel_types=dict.fromkeys(planes, "half"))
    sink = MemorySink()
    execute([Cdl(slope=2.0, power=1.5)], MemorySource(Image(20, 16, planes, meta)), sink, cpu_backend)
    for c in planes:
        np.testing.assert_array_equal(planes[c].view(np.uint16), before[c].view(np.uint16))
    assert sink.image is not None and not np.array_equal(sink.image.planes["R"], before["R"])


def test_one_thread_runs_every_block_on_the_calling_thread():
    from oxi_cli.backends.cpu.pool import run_blocks

    seen: list[tuple[int, int, int]] = []
    worker = threading.Thread(target=lambda: run_blocks(lambda s, e: seen.append((threading.get_ident(), s, e)),
                                                        10, 3, threads=1))
    worker.start()
    worker.join()
    assert [(s, e) for _, s, e in seen] == [(0, 3), (3, 6), (6, 9), (9, 10)]
    assert {t for t, _, _ in seen} == {worker.ident}


def test_blocks_on_several_threads_each_run_once_and_a_failure_reaches_the_caller():
    from oxi_cli.backends.cpu.pool import run_blocks

    done: list[int] = []
    run_blocks(lambda s, e: done.extend(range(s, e)), 1000, 7, threads=4)
    assert sorted(done) == list(range(1000))

    def fail(start: int, stop: int) -> None:
        if start >= 500:
            raise ValueError(f"block {start}")

    with pytest.raises(ValueError, match="block 5"):
        run_blocks(fail, 1000, 100, threads=4)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_runs_blocks_on_threads_of_its_own():
    from oxi_cli.backends.cpu.pool import run_blocks

    run_blocks(lambda s, e: None, 100, 10, threads=2)  # the parent's pool exists before the fork
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        done: list[int] = []
        run_blocks(lambda s, e: done.append(s), 100, 10, threads=2)
        os._exit(0 if sorted(done) == list(range(0, 100, 10)) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_child_forked_while_a_thread_makes_a_pool_still_runs_blocks():
    from oxi_cli.backends.cpu import pool

    with pool._lock:  # as a thread of the parent's inside _pool() at the moment of the fork
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit status
            done: list[int] = []
            pool.run_blocks(lambda s, e: done.append(s), 100, 10, threads=3)
            os._exit(0 if sorted(done) == list(range(0, 100, 10)) else 1)
    deadline = time.monotonic() + 20
    while (ended := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if ended[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the child waited forever for the lock its parent's thread held at the fork")
    assert os.waitstatus_to_exitcode(ended[1]) == 0


def test_the_thread_count_is_the_request_clamped_to_the_cores():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert CpuBackend(threads=1).threads == 1
    assert CpuBackend(threads=10_000).threads == cores
    assert CpuBackend().threads == cores


@pytest.mark.parametrize("name", ["colour", "blur", "colour then resize"])
def test_a_float_result_from_half_input_is_never_rounded_to_half(cpu_backend, name):
    from oxi_cli.execute import run_chain

    img = _half_image((21, 26, 4), seed=4)
    halves = [np.ascontiguousarray(img[..., c]) for c in range(4)]
    floats = [p.astype(np.float32) for p in halves]
    got = run_chain(cpu_backend, halves, CHAINS[name], True, adopt=True, half_result=False)
    want = run_chain(cpu_backend, floats, CHAINS[name], True, adopt=True, half_result=False)
    for g, w in zip(cpu_backend.download_planes(got), cpu_backend.download_planes(want), strict=True):
        _same_values(g, w, f"{name}: float32 result from half planes vs from float32 planes")


def test_cpus_without_half_instructions_get_the_same_results(cpu_backend, tmp_path):
    """OXI_HALF_IN_KERNELS=0 takes the path of a CPU without F16C: numpy widens and narrows around the kernels."""
    import subprocess
    import sys
    import textwrap

    img = _half_image((19, 23, 4), seed=8)
    np.save(tmp_path / "img.npy", img)
    script = textwrap.dedent(f"""
        import numpy as np
        from oxi_cli.backends.cpu.backend import CpuBackend
        from oxi_cli.backends.cpu.kernels import half
        from tests.backends.test_cpu_half import CHAINS, _run
        assert not half.IN_KERNELS
        img = np.load({str(tmp_path / "img.npy")!r})
        for name, chain in CHAINS.items():
            np.save({str(tmp_path)!r} + f"/{{name}}.npy", _run(CpuBackend(), img, chain, np.float16, True))
    """)
    env = {**os.environ, "OXI_HALF_IN_KERNELS": "0"}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=str(Path(__file__).parents[2]))
    for name, chain in CHAINS.items():
        want = _run(cpu_backend, img, chain, np.float16, half_result=True)
        _same_values(np.load(tmp_path / f"{name}.npy"), want, f"{name} without half in kernels")
