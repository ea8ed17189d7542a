"""A user-facing step: an op's parameters declared once, from which its command, `oxi run` flag and recipe keys come."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from oxi_cli.errors import UsageError
from oxi_cli.ops.values import did_you_mean, numbers, pairs, shown, switch

TEXT, FLAG = "text", "flag"


@dataclass(frozen=True)
class Param:
    """One parameter. `name` is its recipe key and its `--step:name=` modifier in `oxi run`; the step's own
    command spells it `option` (default `--name`; "" keeps it off the command)."""

    name: str
    help: str
    kind: str = TEXT  # TEXT: any value, parsed by the step's build; FLAG: true/false
    default: Any = None
    option: str | None = None
    metavar: str | None = None
    # The values shell completion offers, given the step's values typed so far (by parameter name).
    complete: Callable[[Mapping[str, Any]], Sequence[str]] | None = None

    @property
    def flag(self) -> str:
        return self.option if self.option is not None else "--" + self.name.replace("_", "-")


def choices(*names: str) -> Callable[[Mapping[str, Any]], Sequence[str]]:
    """A Param's `complete` for a fixed set of values."""
    return lambda given: names


class SideFiles(Protocol):
    """What a step may read besides its values (the recipe layer provides it: ops sit below the file formats)."""

    def lut(self, path: Path, interp: str) -> list[Any]: ...

    def cdl(self, path: Path, cc_id: str | None, style: str, id_label: str) -> Any: ...


class Deferred:
    """A step whose ops depend on the image it meets (a resize to one side or into a box)."""

    def resolve(self, width: int, height: int, windows: bool = True, frame: Any = None) -> list[Any]:
        """The ops for a width x height image; `windows`: the output format keeps data and display windows;
        `frame`: the image's (data, display) windows (None: one window, its pixels)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Step:
    """What users write to get an op: `oxi NAME IN OUT --value ...`, `oxi run --NAME VALUE`, `[[op]] NAME = VALUE`.

    `build` turns the given values (a StepArgs) into ops, or a Deferred resolved per image. `run_help` is the
    step's line in `oxi run --help`; `examples` end its command's help; `listing`, when set, gives the command
    a `--list` that shows what the step's names may be (it returns a JSON-able dict and its text form).
    """

    name: str
    summary: str
    value: Param
    params: tuple[Param, ...]
    build: Callable[[StepArgs], Any]
    run_help: str
    examples: str = ""
    aliases: tuple[str, ...] = ()
    listing: Callable[[StepArgs], tuple[dict[str, Any], str]] | None = None
    listing_help: str = "List the names this command takes."

    @property
    def all_params(self) -> tuple[Param, ...]:
        return (self.value, *self.params)

    def param(self, name: str) -> Param:
        return next(p for p in self.all_params if p.name == name)

    def gather(self, value: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        """The values as given: the main value may itself hold parameters, as a table (TOML) or as
        'key=value ...' naming this step's parameters ('slope=1.1 sat=0.9', 'radius=9')."""
        given = dict(params)
        names = [p.name for p in self.all_params]
        if isinstance(value, Mapping):
            given, value = {**value, **given}, None
        elif isinstance(value, str) and _names_a_param(value, names):
            given, value = {**pairs(value, r"[\s;]+"), **given}, None
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise UsageError(f"{self.name} has no parameter {shown(unknown[0])}{did_you_mean(unknown[0], names)} "
                             f"(it takes {', '.join(names)})")
        if value is not None and value != "":  # `--resize:width=512 ""`: the parameters say it all
            given[self.value.name] = value
        return given


def _names_a_param(value: str, names: Sequence[str]) -> bool:
    m = re.match(r"\s*([A-Za-z_][\w-]*)=", value)
    return m is not None and m.group(1).replace("-", "_") in names


@dataclass
class StepArgs:
    """A step's given values and their context, with the parsers its build uses (error labels follow where the
    values came from: `--slope` on the step's command, `--cdl:slope` in `oxi run`, `cdl slope` in recipes,
    `slope=` for Python's keyword arguments, `Cdl(slope=...)`)."""

    step: Step
    given: dict[str, Any]
    files: SideFiles
    command: bool = False
    base: Path | None = None  # a recipe's folder: relative file names resolve against it
    force: bool = False  # `oxi run --force`
    force_hint: str = "--force"
    where: str = ""
    sources: list[Path] = field(default_factory=list)  # files read, for --json
    notes: list[str] = field(default_factory=list)  # what the step chose for the user: one stderr line each
    keywords: Mapping[str, str] | None = None  # given as Python keyword arguments: parameter -> its keyword

    def __contains__(self, name: str) -> bool:
        return self.given.get(name) is not None

    def raw(self, name: str) -> Any:
        value = self.given.get(name)
        return self.step.param(name).default if value is None else value

    def label(self, name: str) -> str:
        param = self.step.param(name)
        if self.keywords is not None:
            return f"{self.keywords.get(name, name)}="
        if self.command:
            return param.flag
        if self.where.startswith("--"):  # `oxi run --resize:filter=box`
            return self.where if param is self.step.value else f"{self.where}:{name}"
        return self.step.name if param is self.step.value else f"{self.step.name} {name}"

    def text(self, name: str) -> str | None:
        value = self.raw(name)
        return None if value is None else str(value)

    def choice(self, name: str, choices: Sequence[str]) -> str:
        value = str(self.raw(name))
        if value not in choices:
            raise UsageError(f"{self.label(name)} must be {' or '.join(choices)}, got {shown(value)}")
        return value

    def numbers(self, name: str, counts: tuple[int, ...]) -> list[float] | None:
        return None if name not in self else numbers(self.label(name), self.given[name], counts)

    def number(self, name: str) -> float | None:
        values = self.numbers(name, (1,))
        return None if values is None else values[0]

    def rgb(self, name: str) -> tuple[float, float, float] | None:
        """R,G,B or one number for all three."""
        v = self.numbers(name, (1, 3))
        if v is None:
            return None
        return (v[0],) * 3 if len(v) == 1 else (v[0], v[1], v[2])

    def switch(self, name: str) -> bool:
        return switch(self.label(name), self.raw(name) or False)

    def path(self, name: str) -> Path | None:
        """A file name, relative to the recipe's folder when it came from a recipe."""
        value = self.raw(name)
        if value is None:
            return None
        if not isinstance(value, (str, Path)) or not str(value):
            raise UsageError(f"{self.label(name)}: expected a file name, got {shown(value)}")
        path = Path(value).expanduser()
        path = path if path.is_absolute() or self.base is None else self.base / path
        self.sources.append(path)
        return path

    def one_of(self, names: Sequence[str]) -> str:
        """The one of `names` given; refuse none or several."""
        given = [n for n in names if n in self]
        if len(given) != 1:
            listed = ", ".join(self.label(n) for n in names)
            got = ", ".join(self.label(n) for n in given) or "none"
            raise UsageError(f"{self.step.name} needs exactly one of {listed} (got {got})")
        return given[0]
