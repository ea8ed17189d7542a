"""The two op families and what generic code asks of an op: ColorOp (per pixel) and ImageOp (spatial)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from oxi_cli.errors import OpError, UsageError

if TYPE_CHECKING:
    import numpy as np  # annotations only: numpy loads when a function here runs, not for `oxi --help`

    from oxi_cli.colour_tags import ColourTag

# float32's largest finite value, spelled out rather than asked of numpy for the same reason.
FLOAT32_MAX = (2 - 2**-23) * 2.0**127
# A window as (x, y, width, height): where an image's pixels (data) or its picture (display) lie.
Box = tuple[int, int, int, int]

@dataclass(frozen=True)
class Encoded:
    """One colour op as a row of the colour program (ops/program.py): its op code, its float parameters and
    the table it indexes (None when it has none)."""

    code: int
    params: Sequence[float]
    table: np.ndarray | None = None


class ColorOp:
    """A per-pixel transform of R, G, B (alpha only when `touches_alpha`); other channels pass through."""

    name: ClassVar[str]
    # Arithmetic per pixel, in float multiply-adds (a pow counts ~20): what `auto` weighs backends by.
    flops_per_pixel: ClassVar[int] = 16
    # True on the ops of a colour-space or display conversion (set by whoever builds them): their values are
    # meant for the output's encoding, so writing them to an integer file is no silent clipping.
    encodes_output: ClassVar[bool] = False
    # The colour spaces a conversion goes from and to, set by whoever builds its ops on the first and the last:
    # the output is tagged with a chain's last `output_space` (chain_colour), and a file that declares another
    # space than the chain's first `input_space` is warned about.
    input_space: ClassVar[ColourTag | None] = None
    output_space: ClassVar[ColourTag | None] = None

    def is_identity(self) -> bool:
        return False

    def touches_alpha(self) -> bool:
        """True when the op reads or writes alpha, so the chain must carry channel 3 as alpha."""
        return False

    def encode(self, has_alpha: bool) -> Encoded:
        """This op as a row of the colour program every backend runs."""
        raise NotImplementedError

    def table_bytes(self) -> int:
        """Device bytes of this op's table, as the widest layout a shader may use (vec4 per entry)."""
        return 0

    def work(self, width: int, height: int, channels: int) -> float:
        """Float operations this op costs on an image of that size."""
        return float(width) * height * self.flops_per_pixel

    def runs_natively(self) -> bool:
        """False for an op no backend kernel runs: the executor applies it on the host (`apply_on_host`)
        between the fused device chains."""
        return True

    def apply_on_host(self, rgb: Sequence[np.ndarray]) -> None:
        """Transform float32 R, G, B planes in place (only ops that do not run natively); an op that
        `touches_alpha` gets the layer's alpha as a fourth plane where it has one."""
        raise NotImplementedError


@dataclass(frozen=True)
class AxisStep:
    """What one spatial op does along one axis of its input: `src` pixels in, `dst` out, and which input
    range each output range needs. Blur-like ops reach `radius` pixels either side; ops that change the size
    give, per output index o, the lowest input any output at or after o reads (`first`) and the highest any
    output at or before o reads (`last`)."""

    src: int
    dst: int
    radius: int = 0
    first: np.ndarray | None = None
    last: np.ndarray | None = None

    def needs(self, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Input ranges [start, stop) that make output ranges [start, stop) exact."""
        import numpy as np

        if self.first is None or self.last is None:
            return np.maximum(start - self.radius, 0), np.minimum(stop + self.radius, self.src)
        return self.first[start], self.last[stop - 1] + 1


class ImageOp:
    """A spatial transform acting on every channel; may change the image size.

    The planner and the executor know an image op only through these methods: its output size, its
    footprint along each axis, the op that computes one piece of it, and a cheap instance for warm-up.
    """

    name: ClassVar[str]
    # The backend kernel that computes the op, when it is another op's (a windowed blur runs on resize's).
    kernel: ClassVar[str | None] = None

    def kernel_name(self) -> str:
        """The name backends compute this op by (their IMAGE_OPS tables, the CPU's kernel modules)."""
        return self.kernel or self.name

    def is_identity(self) -> bool:
        return False

    def out_size(self, width: int, height: int) -> tuple[int, int]:
        return width, height

    def axis_step(self, axis: int, size: int) -> AxisStep:
        """The op along rows (axis 0) or columns (axis 1) of a `size`-pixel input."""
        raise NotImplementedError

    def work(self, width: int, height: int, channels: int) -> float:
        """Float operations this op costs on an image of that size (input size; its output from out_size)."""
        raise NotImplementedError

    def piece(self, rows: tuple[int, ...], cols: tuple[int, ...]) -> ImageOp:
        """The op that computes one band or tile exactly as the whole-image op computes those pixels. Per
        axis: (whole input size, whole output size, first input index the piece holds, first and end output
        index it makes)."""
        return self

    def sample(self) -> ImageOp:
        """An instance running the same kernels on a tiny image (loads them before the real work)."""
        return self

    def windows(self, data: Box, display: Box) -> tuple[Box, Box]:
        """The output's data and display windows, given the input's (`data` is the input's pixels). By
        default both scale with the size, origins too, as oiiotool's --resize does; same size: unchanged."""
        return scaled_windows(data, display, *self.out_size(data[2], data[3]))

    def for_part(self, first: tuple[Box, Box], part: tuple[Box, Box]) -> ImageOp:
        """This op for another part of the same picture (a multi-part file), whose (data, display) windows are
        `part` where the op was made for `first`: the parts must come out registered, under one display window.
        By default an op that keeps the size is the same op; one that changes it says how in an override."""
        size, made = part[0][2:], first[0][2:]
        if size == made or (self.out_size(*made) == made and self.out_size(*size) == size):
            return self
        raise UsageError(
            f"{self.name}: the file's parts hold pixels of different sizes ({made[0]}x{made[1]} and "
            f"{size[0]}x{size[1]}), which this {self.name} cannot keep registered; process one with --part"
        )


def scaled_windows(data: Box, display: Box, width: int, height: int) -> tuple[Box, Box]:
    """Windows for `data`'s pixels resized to width x height: both scale by new/old data size, origins included
    (rounded half up); a display window that equalled the data window still equals it."""
    if data[2:] == (width, height):
        return data, display
    sx, sy = width / data[2], height / data[3]
    new_data = (_round(data[0] * sx), _round(data[1] * sy), width, height)
    new_display = (
        _round(display[0] * sx),
        _round(display[1] * sy),
        max(1, _round(display[2] * sx)),
        max(1, _round(display[3] * sy)),
    )
    return new_data, new_display


def live(ops: Iterable[Any]) -> list[Any]:
    """The ops that change pixels: identities (a slope of 1, a resize to the same size) dropped, the one place
    that decides it for the planner, the executor and the band pipeline."""
    return [op for op in ops if not op.is_identity()]


def chain_size(ops: Iterable[object], width: int, height: int) -> tuple[int, int]:
    """The image size after every image op of a chain (colour ops keep it)."""
    for op in ops:
        if isinstance(op, ImageOp):
            width, height = op.out_size(width, height)
    return width, height


def ops_for_part(ops: Sequence[object], first: tuple[Box, Box], part: tuple[Box, Box]) -> list[object]:
    """A chain made for the first part's (data, display) windows, for another part's (ImageOp.for_part)."""
    if part == first:
        return list(ops)
    found: list[object] = []
    for op in ops:
        if isinstance(op, ImageOp):
            mine = op.for_part(first, part)
            first, part = op.windows(*first), mine.windows(*part)
            op = mine
        found.append(op)
    return found


def windows_of(meta: Any, width: int, height: int) -> tuple[Box, Box]:
    """An image's (data, display) windows: its metadata's, else one window of its pixels."""
    return getattr(meta, "windows", None) or ((0, 0, width, height),) * 2


def chain_windows(ops: Iterable[object], data: Box, display: Box) -> tuple[Box, Box]:
    """The windows after every image op of a chain (colour ops leave them as they are)."""
    for op in ops:
        if isinstance(op, ImageOp):
            data, display = op.windows(data, display)
    return data, display


def chain_colour(ops: Iterable[object]) -> tuple[ColourTag | None, ColourTag | None]:
    """The colour space a chain takes its input in (its first conversion's source) and leaves its output in (its
    last conversion's target); None where no op says (a grade keeps the space it is given)."""
    source = target = None
    for op in ops:
        if isinstance(op, ColorOp):
            source = source or op.input_space
            target = op.output_space or target
    return source, target


def _round(x: float) -> int:
    return math.floor(x + 0.5)


def finite_triple(label: str, values: float | Iterable[float]) -> tuple[float, float, float]:
    """Accept one number or three; reject NaN/Inf so kernels never see them as parameters."""
    if isinstance(values, (int, float)):
        values = (values,) * 3
    vals = tuple(float(v) for v in values)
    if len(vals) != 3:
        raise OpError(f"{label} needs 1 or 3 numbers, got {len(vals)}")
    check_finite(label, vals)
    return vals  # type: ignore[return-value]


def check_finite(label: str, values: Sequence[float]) -> None:
    """Finite and within float32's range: kernels take parameters as float32, where 1e39 is Inf."""
    if not all(math.isfinite(v) for v in values):
        raise OpError(f"{label} must be finite numbers, got {list(values)}")
    if any(abs(v) > FLOAT32_MAX for v in values):
        raise OpError(f"{label} must lie within ±3.4e38 (float32), got {list(values)}")


def freeze_lut(op: object, label: str, table: np.ndarray, size: int, min_size: int, max_size: int) -> None:
    """Shared LUT checks (size, finite values, a non-empty domain), then store a read-only contiguous table."""
    import numpy as np

    if not min_size <= size <= max_size:
        raise OpError(f"{label} size must be {min_size}..{max_size}, got {size}")
    if not np.isfinite(table).all():
        raise OpError(f"{label} contains NaN or Inf values")
    lo = finite_triple(f"{label} domain min", op.domain_min)  # type: ignore[attr-defined]
    hi = finite_triple(f"{label} domain max", op.domain_max)  # type: ignore[attr-defined]
    if any(h <= lo_ for lo_, h in zip(lo, hi, strict=True)):
        raise OpError(f"{label} domain max {hi} must exceed domain min {lo}")
    table = np.ascontiguousarray(table)
    table.setflags(write=False)
    object.__setattr__(op, "table", table)
    object.__setattr__(op, "domain_min", lo)
    object.__setattr__(op, "domain_max", hi)


def lut_domain(op: object) -> list[float]:
    """A LUT's parameters in the colour program: domain minimum RGB, then index scale RGB."""
    import numpy as np

    lo = np.asarray(op.domain_min, dtype=np.float64)  # type: ignore[attr-defined]
    scale = (op.size - 1) / (np.asarray(op.domain_max, np.float64) - lo)  # type: ignore[attr-defined]
    return [*lo.tolist(), *scale.tolist()]


def describe_op(op: object) -> dict[str, Any]:
    """An op value as JSON-ready parameters; tables become their shape, not their numbers."""
    out: dict[str, Any] = {"op": getattr(op, "name", type(op).__name__.lower())}
    if not dataclasses.is_dataclass(op):
        return out
    for f in dataclasses.fields(op):
        value = getattr(op, f.name)
        if hasattr(value, "shape") and getattr(value, "ndim", 0) > 1:
            out[f"{f.name}_shape"] = list(value.shape)
        elif hasattr(value, "tolist"):
            out[f.name] = _json_number(value.tolist())
        elif isinstance(value, (tuple, list)):
            out[f.name] = [_json_number(v) for v in value]
        else:
            out[f.name] = _json_number(value)
    return out


def _json_number(v: Any) -> Any:
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {k: _json_number(x) for k, x in dataclasses.asdict(v).items()}
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, tuple):
        return [_json_number(x) for x in v]
    if isinstance(v, list):
        return [_json_number(x) for x in v]
    return v
