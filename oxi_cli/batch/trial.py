"""`auto` on a batch whose estimate is close: frames timed on each backend, the rest on the faster."""

from __future__ import annotations

import threading
from typing import Any

# Frames each backend runs before the choice: the first warms it up (Numba's kernels, the GPU's device and pipelines),
# the others are timed and the fastest counts. One timed frame each chose the CPU for a 32-frame chain on a 16-core
# host with an H100 GPU in both runs of one call (batch 1.44x the GPU's) and the GPU in the next three.
FRAMES_EACH = 3
# Below this many files the frames run on the slower backend cost more than a wrong guess would.
MIN_FILES = 4 * FRAMES_EACH
# Estimates further apart than this are trusted; closer ones are timed (the CPU's figure was 1.7x off for a
# grade-look-blur chain on 16 cores, and the GPU's per-frame stages beat the CPU's beyond compute).
TRUSTED_RATIO = 4.0


def timed_candidates(estimate: Any) -> list[str]:
    """The backends a trial times, by name: the host first (a device that will not open stands in as it), then
    every other within TRUSTED_RATIO of the fastest (one further off would cost whole frames for nothing)."""
    from oxi_cli.backends import registry

    seconds = estimate.seconds
    fastest = max(min(seconds.values()), 1e-6)
    return [registry.HOST, *(name for name, s in seconds.items()
                             if name != registry.HOST and s < TRUSTED_RATIO * fastest)]


def worth_timing(estimate: Any, files: int | None) -> bool:
    """Whether a batch of `files` should time its two fastest candidates rather than trust `estimate`
    (cost.Estimate: their seconds far apart are trusted)."""
    if estimate is None or files is None or files < MIN_FILES:
        return False
    fast, slow = sorted(estimate.seconds.values())[:2]
    return slow < TRUSTED_RATIO * max(fast, 1e-6)


class Trial:
    """Hands out backends frame by frame: FRAMES_EACH to each candidate in turn, then the one whose fastest timed
    frame took least (the first candidate, the host, when every other failed). Files are handed out in order by
    one thread; their ends are reported from others."""

    def __init__(self, candidates: dict[str, Any]) -> None:
        """`candidates`: backend name (what a file's record says it ran on) -> the backend to hand out."""
        self.candidates = candidates
        self.order = [backend for backend in candidates.values() for _ in range(FRAMES_EACH)]
        self.timed_slots = {i * FRAMES_EACH + k: name for i, name in enumerate(candidates)
                            for k in range(1, FRAMES_EACH)}
        self.seconds: dict[str, list[float | None]] = {name: [] for name in candidates}
        self._lock = threading.Lock()
        self.handed = 0
        self.decided = threading.Event()
        self.winner: Any = None
        self._verdict: str | None = None

    def next_backend(self) -> tuple[Any, int | None]:
        """The backend for the next file and its slot in the trial (None after it), waiting for the timed
        frames to finish once they are all handed out."""
        slot = self.handed
        self.handed += 1
        if slot < len(self.order):
            return self.order[slot], slot
        self.decided.wait()
        return self.winner, None

    def finished(self, slot: int | None, seconds: float | None, ran_on: str | None) -> None:
        """A file of the trial ended: `seconds` when it succeeded, on the backend named `ran_on` (a GPU that
        would not open falls back to the CPU, which then stands for it)."""
        if slot not in self.timed_slots:
            return
        wanted = self.timed_slots[slot]
        with self._lock:
            self.seconds[wanted].append(seconds if ran_on == wanted else None)
            if sum(map(len, self.seconds.values())) == len(self.timed_slots):
                self._decide()

    def _fastest(self, name: str) -> float | None:
        """A backend's fastest timed frame; None when any of them failed or ran elsewhere."""
        times = self.seconds[name]
        return None if not times or None in times else min(t for t in times if t is not None)

    def _decide(self) -> None:
        from oxi_cli.backends import registry

        fastest = {name: self._fastest(name) for name in self.candidates}
        timed = [name for name, s in fastest.items() if s is not None]
        won = min(timed, key=lambda name: fastest[name]) if timed else next(iter(self.candidates))
        self.winner = self.candidates[won]
        shown = ", ".join(f"{registry.kind(name).label} {'failed' if s is None else f'{s:.2f} s'}"
                          for name, s in fastest.items())
        self._verdict = (f"auto timed {FRAMES_EACH - 1} frames on each backend (fastest: {shown}): the "
                         f"{registry.kind(won).label} runs the rest")
        self.decided.set()

    def verdict(self) -> str | None:
        """The decision in one line, the first time it is asked for once made (for the batch to say it once)."""
        line, self._verdict = self._verdict, None
        return line
