"""How bands and tiles map back through a chain: each output range's input rows and columns, op by op."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from oxi_cli.ops import AxisStep, ImageOp, Op


def axis_steps(ops: Sequence[Op], size: int, axis: int) -> list[AxisStep]:
    """The image ops of a chain as seen along rows (axis 0) or columns (axis 1) of a `size` input."""
    steps = []
    for op in ops:
        if isinstance(op, ImageOp):
            step = op.axis_step(axis, size)
            steps.append(step)
            size = step.dst
    return steps


@dataclass(frozen=True)
class AxisSpans:
    """Segments of one output axis and, for each, the input range to read and the range each op computes.

    A band or tile is computed over `read` (input coordinates) and every intermediate range in `stages`;
    only its own output range `out` is kept (`crop` is where it starts inside the computed output).
    """

    out: np.ndarray  # (n, 2) output [start, stop)
    read: np.ndarray  # (n, 2) input [start, stop)
    stages: tuple[np.ndarray, ...]  # one (n, 2) computed range per spatial op, in its output coordinates
    sizes: tuple[tuple[int, int], ...]  # each spatial op's whole-image (src, dst) along this axis

    @property
    def count(self) -> int:
        return int(self.out.shape[0])

    @property
    def crop(self) -> np.ndarray:
        final = self.stages[-1] if self.stages else self.read
        return self.out - final[:, :1]

    def lengths(self) -> list[int]:
        """Longest range per stage (read first), the sizes buffers must hold."""
        return [int((r[:, 1] - r[:, 0]).max()) for r in (self.read, *self.stages)]


def axis_spans(
    steps: Sequence[AxisStep], size: int, starts: np.ndarray, stops: np.ndarray
) -> AxisSpans:
    """Map output segments [starts, stops) back through `steps` to the input each one needs.

    Backwards, each op turns the rows that must come out exact into the rows that must go in exact:
    blur adds R on each side (clamped at the image edge, where the kernel's own clamping then applies
    because the band is at the edge too); resize takes its taps' range. Forwards, the read range then
    gives the range every op computes, and each output segment is cropped from the last one.

    Every op computes a piece as the whole-image op computes those pixels (ImageOp.piece: a resize uses the
    whole image's weights for the rows it covers), so bands may start anywhere.
    """
    need0 = np.asarray(starts, dtype=np.int64)
    need1 = np.asarray(stops, dtype=np.int64)
    out = np.stack([need0, need1], axis=1)
    needs = []  # each step's needed output range, backwards
    for step in reversed(steps):
        needs.append(np.stack([need0, need1], axis=1))
        need0, need1 = step.needs(need0, need1)
    needs.reverse()
    read = np.stack([need0, np.minimum(need1, size)], axis=1)
    stages = []
    current = read
    for step, need in zip(steps, needs, strict=True):
        if step.first is not None:
            current = need
        if (current[:, 0] > need[:, 0]).any() or (current[:, 1] < need[:, 1]).any():
            raise AssertionError("planner: a band's computed range misses rows the next op needs")
        stages.append(current)
    sizes = tuple((step.src, step.dst) for step in steps)
    return AxisSpans(out, read, tuple(stages), sizes)


def segments(total: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    starts = np.arange(0, total, max(1, size), dtype=np.int64)
    return starts, np.minimum(starts + size, total)
