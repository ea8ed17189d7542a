"""Op chains as people write them (command-line flags, TOML recipes), checked once, resolved per image."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oxi_cli.errors import FormatError, InputError, OxiError, UsageError
from oxi_cli.formats.ocio_steps import COLORSPACE, DISPLAY
from oxi_cli.ops import blur, cdl, lut3d, matrix, resize
from oxi_cli.ops.step import Deferred, Step, StepArgs
from oxi_cli.ops.values import did_you_mean, shown

# Every step users can write, by name: the single-op commands, `oxi run`'s flags and recipe keys all come
# from these declarations (each op's STEP, beside the op itself).
STEPS: dict[str, Step] = {
    step.name: step for step in (cdl.STEP, lut3d.STEP, matrix.STEP, resize.STEP, blur.STEP, COLORSPACE, DISPLAY)
}
# Recipe settings: table -> keys; each key has the command-line option of the same name (underscores
# become dashes), and an option given on the command line wins over the recipe.
SETTINGS: dict[str, tuple[str, ...]] = {
    "output": ("name", "out_type", "compression", "quality", "codec", "fps", "burn"),
    "run": ("backend", "jobs", "memory_budget", "threads", "unpremult"),
}
# What each setting holds, as TOML spells it, with an example for the error message.
SETTING_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "name": ((str,), 'a string, e.g. name = "{stem}_graded{ext}"'),
    "out_type": ((str,), 'a string, e.g. out_type = "half"'),
    "compression": ((str,), 'a string, e.g. compression = "zip" or "dwab:45"'),
    "quality": ((int,), "an integer 1-100 (a JPEG's), e.g. quality = 90"),
    "codec": ((str,), 'a string, e.g. codec = "prores_hq" (a movie\'s)'),
    "fps": ((str, int, float), 'a rate, e.g. fps = 24 or fps = "23.976" (a movie\'s)'),
    "burn": ((list, str), 'a string or a list of strings, e.g. burn = ["{shot}  {frame}", "top-right:{timecode}"]'),
    "backend": ((str,), 'a string, e.g. backend = "gpu"'),
    "jobs": ((int,), "an integer, e.g. jobs = 2"),
    "memory_budget": ((str, int), 'a size, e.g. memory_budget = "8G"'),
    "threads": ((int,), "an integer, e.g. threads = 8"),
    "unpremult": ((bool,), "true or false, e.g. unpremult = true"),
}


# --- what steps read besides their values -------------------------------------------------------


class _Files:
    """The file formats steps read (ops sit below formats, so the recipe layer hands them this)."""

    def lut(self, path: Path, interp: str) -> list[Any]:
        from oxi_cli.formats.registry import load_lut

        return list(load_lut(path, interp))

    def cdl(self, path: Path, cc_id: str | None, style: str, id_label: str) -> Any:
        from oxi_cli.formats.registry import load_cdl

        return load_cdl(path, cc_id, style, id_option=id_label)


FILES = _Files()


# --- chains --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpSpec:
    """One step as written: `kind` (cdl, lut3d, matrix, resize, blur), its main value and parameters.

    `where` names it in error messages ('--cdl', 'dailies.toml op 2'); relative file names resolve
    against `base` (a recipe's folder), else the current folder.
    """

    kind: str
    value: Any
    params: Mapping[str, Any] = field(default_factory=dict)
    where: str = ""
    base: Path | None = None


@dataclass
class Chain:
    """Checked steps, each either fixed ops or a Deferred (a resize to one side, a box) resolved per image."""

    steps: list[Any] = field(default_factory=list)
    sources: dict[int, str] = field(default_factory=dict)  # id(op) -> file it came from, for --json
    unpremult: bool = False  # --unpremult: colour ops grade unpremultiplied colour (ops/premult.py)
    notes: list[str] = field(default_factory=list)  # the steps' choices the command says once (not with --quiet)

    def computes_anything(self) -> bool:
        """False when every step leaves the pixels as they are at any image size (a copy, an identity CDL)."""
        return any(isinstance(step, Deferred) or not all(op.is_identity() for op in step) for step in self.steps)

    def ops_for(self, width: int, height: int, windows: bool = True, frame: Any = None) -> list[Any]:
        """The op values for an image of this size and (data, display) windows (`frame`; None: one window),
        sizes and windows flowing through resizes in order; `windows`: the output format keeps data and
        display windows (EXR), see ops/resize.py's ResizeStep."""
        from oxi_cli.ops.base import windows_of

        frame = frame or windows_of(None, width, height)
        ops: list[Any] = []
        for step in self.steps:
            new = step.resolve(width, height, windows, frame) if isinstance(step, Deferred) else step
            for op in new:
                if hasattr(op, "out_size"):
                    width, height = op.out_size(width, height)
                    frame = op.windows(*frame)
            ops.extend(new)
        if self.unpremult:
            from oxi_cli.ops.premult import unpremultiplied

            return unpremultiplied(ops)
        return ops

    def describe(self, ops: Sequence[Any]) -> list[dict[str, Any]]:
        from oxi_cli.ops.base import describe_op

        out = []
        for op in ops:
            d = describe_op(op)
            if id(op) in self.sources:
                d["file"] = self.sources[id(op)]
            out.append(d)
        return out

    def add(self, built: list[Any] | Deferred, sources: Sequence[Path] = (), notes: Sequence[str] = ()) -> None:
        """One step's ops (noting the file they came from and what it chose), or a Deferred resolved per image."""
        self.steps.append(built)
        self.notes.extend(notes)
        if sources and not isinstance(built, Deferred):
            for op in built:
                self.sources[id(op)] = str(sources[0])


def compile_chain(specs: Sequence[OpSpec], force: bool = False, unpremult: bool = False) -> Chain:
    """Check every step and load its files once, before any image is touched; `force` (oxi run --force)
    lets every resize go past the upscale guard; `unpremult`: colour ops grade unpremultiplied colour."""
    chain = Chain(unpremult=unpremult)
    for spec in specs:
        try:
            _compile_one(chain, spec, force)
        except FormatError:
            raise
        except OxiError as e:
            msg = str(e)
            raise type(e)(msg if msg.startswith(spec.where) else f"{spec.where}: {msg}") from None
    return chain


def _compile_one(chain: Chain, spec: OpSpec, force: bool = False) -> None:
    step = STEPS.get(spec.kind)
    if step is None:
        raise UsageError(f"unknown operation {shown(spec.kind)}; use one of {', '.join(STEPS)}")
    in_recipe = spec.base is not None
    hint = "force = true in this [[op]]" if in_recipe else f"--force (or --{step.name}:force=1)"
    args = StepArgs(step, step.gather(spec.value, spec.params), FILES, base=spec.base, force=force,
                    force_hint=hint, where=spec.where)
    chain.add(step.build(args), args.sources, args.notes)


def command_chain(
    step: Step, values: Mapping[str, Any], unpremult: bool = False, keywords: Mapping[str, str] | None = None
) -> Chain:
    """The chain of a step's own command (`oxi cdl ...`): its options, by parameter name. With `keywords`
    (parameter -> Python keyword) the values are a Python call's (oxi_cli.api's `Cdl(slope=...)`), and so are
    the labels of its errors."""
    given = {name: v for name, v in values.items() if v is not None and v is not False}
    hint = "force=True" if keywords is not None else "--force"
    args = StepArgs(step, given, FILES, command=keywords is None, force_hint=hint, keywords=keywords)
    chain = Chain(unpremult=unpremult)
    chain.add(step.build(args), args.sources, args.notes)
    return chain


# --- recipes ---------------------------------------------------------------------------------------


@dataclass
class Recipe:
    """A TOML recipe: a chain of [[op]] tables plus optional [output] and [run] settings."""

    path: Path
    specs: list[OpSpec]
    settings: dict[str, Any]
    description: str = ""


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def load_recipe(path: str | Path) -> Recipe:
    """Read a recipe; every mistake is a FormatError naming the file (and the op number)."""
    path = Path(path)
    tomllib = _toml()
    text = _read_recipe(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        raise FormatError(path, int(m.group(1)) if m else None, f"not valid TOML: {e}") from None
    except RecursionError:
        raise FormatError(path, None, "arrays or tables nested too deeply for a recipe") from None
    known = {"description", "op", *SETTINGS}
    unknown = sorted(set(doc) - known)
    if unknown:
        holds = "description, [output], [run] and [[op]] tables"
        hint = did_you_mean(unknown[0], sorted(known))
        raise FormatError(path, None, f"unknown key {shown(unknown[0])}{hint} (a recipe holds {holds})")
    settings: dict[str, Any] = {}
    for table, keys in SETTINGS.items():
        section = doc.get(table, {})
        if not isinstance(section, dict):
            raise FormatError(path, None, f"[{table}] must be a table")
        for key, val in section.items():
            if key not in keys:
                takes = f"{did_you_mean(key, keys)} (it takes {', '.join(keys)})"
                raise FormatError(path, None, f"[{table}] has no setting {shown(key)}{takes}")
            settings[key] = _setting(path, table, key, val)
    ops = doc.get("op", [])
    if not isinstance(ops, list) or not all(isinstance(o, dict) for o in ops):
        raise FormatError(path, None, "operations are [[op]] tables, e.g. [[op]] then cdl = \"grade.cc\"")
    specs = []
    for n, table in enumerate(ops, 1):
        kinds = [k for k in table if k in STEPS]
        where = f"{path} op {n}"
        if len(kinds) != 1:
            got = ", ".join(kinds) or "none"
            typo = next(((k, hint) for k in table if not kinds and (hint := did_you_mean(k, list(STEPS)))), None)
            if typo is not None:  # `resise = "50%"`: name the key that was meant as the operation
                got += f" ({shown(typo[0])} is not one{typo[1]})"
            raise FormatError(path, None, f"op {n} needs exactly one of {', '.join(STEPS)}; got {got}")
        kind = kinds[0]
        params = {k: v for k, v in table.items() if k != kind}
        specs.append(OpSpec(kind, table[kind], params, where, path.parent))
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise FormatError(path, None, f"description must be a string, got {shown(description)}")
    return Recipe(path, specs, settings, description)


def _read_recipe(path: Path) -> str:
    """The recipe's text; a FIFO, a device (/dev/zero) or a huge file is refused before anything is read."""
    from oxi_cli.files import MAX_RECIPE_BYTES, read_side_file

    data = read_side_file(path, "recipe", MAX_RECIPE_BYTES, text=True)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"recipe {path} is not UTF-8 text") from None


def _setting(path: Path, table: str, key: str, value: Any) -> Any:
    """A recipe setting of the right type (and range), or a FormatError naming the key and what it takes."""
    from oxi_cli.limits import MAX_JOBS, max_threads

    kinds, wanted = SETTING_TYPES[key]
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise FormatError(path, None, f"[{table}] {key} must be {wanted}; got {shown(value)}")
    if key == "burn":
        value = [value] if isinstance(value, str) else value
        if not all(isinstance(v, str) for v in value):
            raise FormatError(path, None, f"[{table}] burn must be {wanted}; got {shown(value)}")
    limits = {"threads": max_threads(), "jobs": MAX_JOBS, "quality": 100}
    if key in limits and not 1 <= value <= limits[key]:
        raise FormatError(path, None, f"[{table}] {key} must be 1..{limits[key]}; got {value}")
    return value
