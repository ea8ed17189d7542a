"""Worker threads share one backend one call at a time, and get the same numbers as a direct call."""

from __future__ import annotations

import threading
import time

import numpy as np

from oxi_cli.backends.cpu.backend import CpuBackend
from oxi_cli.batch.runner import SerializedBackend
from oxi_cli.ops import Cdl


class TimedCpuBackend(CpuBackend):
    """The real CPU backend, noting when each colour chain runs."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[float, float]] = []

    def color_chain(self, src, dst, ops, has_alpha) -> None:  # noqa: ANN001
        t0 = time.perf_counter()
        super().color_chain(src, dst, ops, has_alpha)
        time.sleep(0.002)  # long enough that unserialised calls would surely overlap
        self.calls.append((t0, time.perf_counter()))


def test_calls_from_many_threads_never_overlap_and_match_a_direct_call():
    backend = TimedCpuBackend()
    shared = SerializedBackend(backend)
    op = Cdl(slope=(1.1, 0.9, 1.2), power=(1.3, 1.0, 0.8), sat=0.7)
    rng = np.random.default_rng(0)
    images = [rng.lognormal(-1, 1.5, (64, 48, 4)).astype(np.float32) for _ in range(8)]
    expected = []
    for img in images:
        h = backend.upload(img.copy())
        backend.color_chain(h, h, [op], True)
        expected.append(backend.download(h).copy())
    backend.calls.clear()
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        h = shared.upload(images[i].copy())
        shared.color_chain(h, h, [op], True)  # as the executor calls it
        results[i] = shared.download(h).copy()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(images))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    calls = sorted(backend.calls)
    assert len(calls) == len(images)
    assert all(b[0] >= a[1] for a, b in zip(calls, calls[1:], strict=False))
    for i, want in enumerate(expected):
        np.testing.assert_array_equal(results[i], want)
    assert shared.name == "cpu"
