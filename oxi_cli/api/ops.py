"""Ops as Python values: each is a step users write (ops/step.py) given as keyword arguments; chains of them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from os import PathLike
from typing import Any, ClassVar

from oxi_cli import recipe
from oxi_cli.ops.base import live

Numbers = float | Sequence[float] | str  # one number, R,G,B as a sequence, or as text: "1.1,1,0.9"
FileName = str | PathLike[str]


class Op:
    """One operation, as `oxi NAME` and a recipe's `[[op]] NAME = ...` write it, made from the same declaration
    and checked the same way when it is made (files it names are read then). Immutable; `a | b` is a Chain.

    Use the subclasses (Cdl, Lut3d, Matrix, Resize, Blur, ColorSpace, Display); errors are UsageError (or
    InputError / FormatError for the files) with the command's message, naming the keyword: `slope=`.
    """

    step: ClassVar[str]  # its name in recipes and `oxi run` (cdl, lut3d, matrix, resize, blur, colorspace, display)
    # Parameters whose Python keyword differs from the step's name for them (`from` is a Python keyword).
    _renamed: ClassVar[Mapping[str, str]] = {}

    _params: dict[str, Any]
    _steps: list[Any]  # the recipe layer's built steps: lists of op values, or a Deferred resolved per image
    _sources: dict[int, str]

    def __init__(self) -> None:
        raise TypeError("Op is the base of the ops; make one of them: Cdl, Lut3d, Matrix, Resize, Blur, ColorSpace, "
                        "Display")

    def _make(self, **keywords: Any) -> None:
        step = recipe.STEPS[self.step]
        to_param = {kw: name for name, kw in self._renamed.items()}
        values = {to_param.get(k, k): _plain(v) for k, v in keywords.items()}
        labels = {p.name: self._renamed.get(p.name, p.name) for p in step.all_params}
        built = recipe.command_chain(step, values, keywords=labels)
        self._params = {k: v for k, v in keywords.items() if v is not None and v is not False}
        self._steps, self._sources = built.steps, built.sources

    @classmethod
    def _from_spec(cls, spec: recipe.OpSpec) -> Op:
        """The op a recipe's [[op]] table (or an `oxi run` flag) holds, its errors worded as the recipe's."""
        built = recipe.compile_chain([spec])
        kind = _CLASSES[spec.kind]
        op = kind.__new__(kind)
        step = recipe.STEPS[spec.kind]
        given = step.gather(spec.value, spec.params)
        op._params = {kind._renamed.get(p.name, p.name): given[p.name] for p in step.all_params if p.name in given}
        op._steps, op._sources = built.steps, built.sources
        return op

    @property
    def params(self) -> dict[str, Any]:
        """The values it was made with, by keyword."""
        return dict(self._params)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._params.items())
        return f"{type(self).__name__}({shown})"

    def __or__(self, other: Op | Chain) -> Chain:
        if not isinstance(other, (Op, Chain)):
            return NotImplemented
        return Chain([self, other])

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):
            raise AttributeError(f"{type(self).__name__} values are immutable; make a new one")
        super().__setattr__(name, value)


class Cdl(Op):
    """An ASC CDL (slope, offset, power, saturation) with OpenColorIO's maths: `oxi cdl`.

    `file` is a .cc, .ccc or .cdl (`id` picks a correction in a file holding several); values given beside it
    override the file's. `style`: "noclamp" (scene-linear safe, default) or "asc" (clamps to 0..1).
    """

    step = "cdl"

    def __init__(self, file: FileName | None = None, *, slope: Numbers | None = None, offset: Numbers | None = None,
                 power: Numbers | None = None, sat: float | None = None, id: str | int | None = None,
                 style: str = "noclamp") -> None:
        self._make(file=file, slope=slope, offset=offset, power=power, sat=sat, id=id,
                   style=None if style == "noclamp" else style)


class Lut3d(Op):
    """A LUT or transform file applied to R, G, B: .cube, .3dl, .spi3d, .spi1d, .clf, .ctf (`oxi lut3d`).
    `interp`: "tetrahedral" (as OCIO's BEST and oiiotool, default) or "trilinear"."""

    step = "lut3d"

    def __init__(self, file: FileName, *, interp: str = "tetrahedral") -> None:
        self._make(file=file, interp=None if interp == "tetrahedral" else interp)


LutFile = Lut3d  # the same op: it reads 1D LUTs and CLF/CTF transforms too


class Matrix(Op):
    """A colour matrix on R, G, B (and alpha for 4x4), row-major, column vectors, as OCIO's MatrixTransform:
    9, 12 (3x4: the last column adds) or 16 numbers, flat or as rows (a numpy array works); `offset` R,G,B[,A]."""

    step = "matrix"

    def __init__(self, values: Sequence[float] | Sequence[Sequence[float]] | Any,
                 *, offset: Numbers | None = None) -> None:
        self._make(values=_flat(_plain(values)), offset=offset)


class Resize(Op):
    """A separable resize of every channel, sizes as oiiotool's (`oxi resize`): `size` "1920x1080" or (1920, 1080)
    (a box, see `fit`), "1920x0" / "0x1080" (the 0 side keeps the aspect) or "50%"; or one of `width`, `height`,
    `scale` (0.5 or "50%"). `fit` for a box: "fit" (default), "pad", "fill" or "stretch"; `filter`: one of
    oiiotool's names (`oxi resize --help`: "lanczos3", "blackman-harris", "catmull-rom", "mitchell", "gaussian",
    "box"...), default oiiotool's: "blackman-harris" when a side grows, else "lanczos3"; `force` allows more than
    8x or 32768 pixels a side.
    The pixel size is decided per image, from its own size.
    """

    step = "resize"

    def __init__(self, size: str | tuple[int, int] | None = None, *, width: int | None = None,
                 height: int | None = None, scale: float | str | None = None, fit: str = "fit",
                 filter: str | None = None, force: bool = False) -> None:
        if isinstance(size, tuple) and len(size) == 2:
            size = f"{size[0]}x{size[1]}"
        self._make(size=size, width=width, height=height, scale=scale, fit=None if fit == "fit" else fit,
                   filter=filter, force=force)


class Blur(Op):
    """A Gaussian blur of every channel: `sigma` in pixels, or `radius` (sigma = radius / 3) (`oxi blur`); black
    outside an EXR's data window, which grows by the reach unless `keep_window`."""

    step = "blur"

    def __init__(self, sigma: float | None = None, *, radius: float | None = None, keep_window: bool = False) -> None:
        self._make(sigma=sigma, radius=radius, keep_window=keep_window)


class ColorSpace(Op):
    """An OpenColorIO colour-space conversion, `source` to `target` (names, aliases or roles of `config`: a file
    or ocio://..., default $OCIO, else OCIO's built-in default) (`oxi colorspace`)."""

    step = "colorspace"
    _renamed = {"from": "source", "to": "target"}

    def __init__(self, source: str, target: str, *, config: FileName | None = None) -> None:
        self._make(source=source, target=target, config=config)


class Display(Op):
    """An OpenColorIO display/view transform from scene space `source` (`oxi display`), e.g. an ACES 2.0 view;
    `look`: look(s) as OCIO writes them; `inverse`: from the display encoding back to `source`."""

    step = "display"
    _renamed = {"from": "source"}

    def __init__(self, source: str, display: str, view: str, *, look: str | None = None, inverse: bool = False,
                 config: FileName | None = None) -> None:
        self._make(source=source, display=display, view=view, look=look, inverse=inverse, config=config)


_CLASSES: dict[str, type[Op]] = {c.step: c for c in (Cdl, Lut3d, Matrix, Resize, Blur, ColorSpace, Display)}


class Chain:
    """Ops applied in order, as `oxi run --cdl ... --resize ...` applies them: `Chain([a, b])`, `a | b`, or a
    recipe (load_recipe). A recipe's [output] and [run] settings ride along in `settings`; process() uses
    them where its own arguments are not given, as the command does."""

    def __init__(self, ops: Iterable[Op | Chain] = (), *, settings: Mapping[str, Any] | None = None,
                 description: str = "") -> None:
        flat: list[Op] = []
        merged: dict[str, Any] = {}
        for item in ops:
            if isinstance(item, Chain):
                flat.extend(item.ops)
                merged.update(item.settings)
            elif isinstance(item, Op):
                flat.append(item)
            else:
                raise TypeError(f"a Chain holds oxi ops (Cdl, Resize, ...) or chains, not {type(item).__name__}")
        merged.update(settings or {})
        self._ops = tuple(flat)
        self._settings = merged
        self._description = description
        self._built: recipe.Chain | None = None

    @property
    def ops(self) -> tuple[Op, ...]:
        return self._ops

    @property
    def settings(self) -> dict[str, Any]:
        """A recipe's [output] and [run] settings (name, out_type, compression, backend, jobs, ...)."""
        return dict(self._settings)

    @property
    def description(self) -> str:
        return self._description

    def __or__(self, other: Op | Chain) -> Chain:
        if not isinstance(other, (Op, Chain)):
            return NotImplemented
        return Chain([self, other])

    def __iter__(self) -> Iterator[Op]:
        return iter(self._ops)

    def __len__(self) -> int:
        return len(self._ops)

    def __repr__(self) -> str:
        return f"Chain([{', '.join(map(repr, self._ops))}])"

    def _compiled(self) -> recipe.Chain:
        """The recipe layer's chain, which the batch runner and the executor take."""
        if self._built is None:
            built = recipe.Chain()
            for op in self._ops:
                built.steps.extend(op._steps)
                built.sources.update(op._sources)
            self._built = built
        return self._built


def as_chain(chain: Chain | Op | Iterable[Op]) -> Chain:
    """What process() and apply() take: a Chain, one op or a list of them."""
    if isinstance(chain, Chain):
        return chain
    if isinstance(chain, Op):
        return Chain([chain])
    if isinstance(chain, (str, bytes)) or not isinstance(chain, Iterable):
        raise TypeError(f"expected an oxi Chain, op or list of ops, got {type(chain).__name__}; "
                        "a recipe file loads with oxi.load_recipe(path)")
    return Chain(chain)


def load_recipe(path: FileName) -> Chain:
    """A TOML recipe (`oxi run --recipe`) as a Chain: its [[op]] steps, checked and their files read, and its
    [output] / [run] settings; every mistake is a FormatError or UsageError naming the file and op number."""
    found = recipe.load_recipe(path)
    ops = [Op._from_spec(spec) for spec in found.specs]
    return Chain(ops, settings=found.settings, description=found.description)


def _plain(value: Any) -> Any:
    """numpy arrays and scalars as Python lists and numbers, which the steps' parsers take."""
    if not isinstance(value, (str, bytes)) and hasattr(value, "tolist"):
        return value.tolist()
    return value


def _flat(value: Any) -> Any:
    """Rows of a matrix ([[...], [...], [...]]) as one row-major list."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(row, (list, tuple)) for row in value):
        return [v for row in value for v in row]
    return value


def step_ops(chain: Chain, width: int, height: int, windows: bool, frame: Any = None) -> list[Any]:
    """The op values `chain` runs on a width x height image with these (data, display) windows (resizes
    resolved to its display window), identities dropped."""
    return live(chain._compiled().ops_for(width, height, windows, frame))

