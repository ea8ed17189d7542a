"""Op chains as people write them (command-line flags, TOML recipes), checked once, resolved per image."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oxi_cli.errors import FormatError, InputError, OxiError, UsageError
from oxi_cli.ops.values import check_float32, parse_numbers

OP_KINDS = ("cdl", "lut3d", "matrix", "resize", "blur", "colorspace", "display")
# Parameters each op takes besides its main value (the same names on the command line and in TOML).
PARAMS: dict[str, tuple[str, ...]] = {
    "cdl": ("id", "style", "slope", "offset", "power", "sat"),
    "lut3d": ("interp",),
    "matrix": ("offset",),
    "resize": ("filter", "fit", "force"),
    "blur": ("sigma", "radius"),
    "colorspace": ("config",),
    "display": ("from", "view", "look", "inverse", "config"),
}
# Recipe settings: table -> keys; each key has the command-line option of the same name (underscores
# become dashes), and an option given on the command line wins over the recipe.
SETTINGS: dict[str, tuple[str, ...]] = {
    "output": ("name", "out_type", "compression"),
    "run": ("backend", "jobs", "memory_budget", "threads"),
}
# What each setting holds, as TOML spells it, with an example for the error message.
SETTING_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "name": ((str,), 'a string, e.g. name = "{stem}_graded{ext}"'),
    "out_type": ((str,), 'a string, e.g. out_type = "half"'),
    "compression": ((str,), 'a string, e.g. compression = "zip"'),
    "backend": ((str,), 'a string, e.g. backend = "gpu"'),
    "jobs": ((int,), "an integer, e.g. jobs = 2"),
    "memory_budget": ((str, int), 'a size, e.g. memory_budget = "8G"'),
    "threads": ((int,), "an integer, e.g. threads = 8"),
}


# --- builders shared by the single-op commands, `oxi run` and recipes -------------------------------


def numbers(label: str, value: Any, counts: tuple[int, ...]) -> list[float]:
    """Numbers from a string ('1,2,3'), one number, or a list (TOML)."""
    if isinstance(value, str):
        return parse_numbers(label, value, counts)
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise UsageError(f"{label} takes numbers, got {shown(value)}")
    if len(values) not in counts:
        raise UsageError(f"{label} needs {' or '.join(map(str, counts))} numbers, got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise UsageError(f"{label} values must be finite, got {shown(value)}")
    check_float32(label, values, shown(value))
    return [float(v) for v in values]


def shown(value: Any) -> str:
    """A short repr for messages: a recipe value may be a huge or deeply nested TOML array."""
    import reprlib

    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxstring, r.maxother = 2, 6, 60, 60
    return r.repr(value)


def triple(label: str, value: Any) -> tuple[float, float, float]:
    """R,G,B or one number for all three."""
    v = numbers(label, value, (1, 3))
    return (v[0],) * 3 if len(v) == 1 else (v[0], v[1], v[2])


def build_cdl(
    *,
    file: Path | None = None,
    cc_id: str | None = None,
    style: str = "noclamp",
    slope: Any = None,
    offset: Any = None,
    power: Any = None,
    sat: Any = None,
    label: str = "--",
) -> Any:
    """A Cdl from a .cc/.ccc/.cdl file and/or explicit values; explicit values override the file's."""
    from oxi_cli.ops import Cdl

    if style not in ("noclamp", "asc"):
        raise UsageError(f"{label}style must be noclamp or asc, got {shown(style)}")
    base = Cdl(style=style)  # type: ignore[arg-type]
    if file is not None:
        from oxi_cli.formats.registry import load_cdl

        base = load_cdl(file, cc_id, style)
        if cc_id is None:
            _one_correction(file, f"{label}id")
    elif cc_id is not None:
        raise UsageError(f"{label}id picks a correction inside a CDL file; give the file too")
    return Cdl(
        slope=triple(f"{label}slope", slope) if slope is not None else base.slope,
        offset=triple(f"{label}offset", offset) if offset is not None else base.offset,
        power=triple(f"{label}power", power) if power is not None else base.power,
        sat=numbers(f"{label}sat", sat, (1,))[0] if sat is not None else base.sat,
        style=style,  # type: ignore[arg-type]
    )


def _one_correction(file: Path, option: str) -> None:
    """A file holding several corrections needs an id: taking the first in silence grades the wrong shot."""
    from oxi_cli.formats.cdl_xml import read_corrections

    corrections = read_corrections(file.read_bytes(), file)
    if len(corrections) < 2:
        return
    ids = [c.id or f"#{n}" for n, c in enumerate(corrections)]
    listed = ", ".join(ids[:12]) + (f", ... ({len(ids)} in all)" if len(ids) > 12 else "")
    raise UsageError(
        f"{file} holds {len(ids)} corrections ({listed}); pick one with {option} "
        f"(an id, or an index 0..{len(ids) - 1})"
    )


def build_lut(path: Path, interp: str = "tetrahedral") -> list[Any]:
    from oxi_cli.formats.registry import load_lut

    return list(load_lut(path, interp))


def build_matrix(values: Any, offset: Any = None, label: str = "--") -> Any:
    from oxi_cli.ops import Matrix

    m = numbers(f"{label}matrix", values, (9, 12, 16))
    off = numbers(f"{label}offset", offset, (3, 4)) if offset is not None else None
    return Matrix.from_values(m, off)


def build_colorspace(source: str, target: str, config: str | None = None) -> list[Any]:
    """OCIO's conversion between two colour spaces (names, aliases or roles) as oxi ops."""
    from oxi_cli.formats.ocio_config import Conversion

    return _conversion_ops(Conversion(source, target, config=config))


def build_display(
    source: str, display: str, view: str, looks: str | None = None, inverse: bool = False, config: str | None = None
) -> list[Any]:
    """OCIO's display/view transform (with optional looks, or its inverse) as oxi ops."""
    from oxi_cli.formats.ocio_config import Conversion

    return _conversion_ops(Conversion(source, display=display, view=view, looks=looks, inverse=inverse, config=config))


def _conversion_ops(conversion: Any) -> list[Any]:
    from oxi_cli.formats.ocio_config import processor
    from oxi_cli.formats.ocio_ops import fallback_note, ops_from_processor

    ops = ops_from_processor(processor(conversion))
    for op in ops:  # values meant for the output encoding: no clipping warning for integer files
        object.__setattr__(op, "encodes_output", True)
    note = fallback_note(ops, conversion.describe())
    if note:
        print(f"oxi: warning: {note}", file=sys.stderr)
    return ops


def split_names(value: Any, count: int, config: str | None, label: str) -> list[str]:
    """'ACEScg:ACEScct' (or 'FROM:DISPLAY:VIEW') split at the colons that leave names the config knows:
    names and aliases may hold colons themselves ('ocio:acescct_ap1_scene')."""
    import itertools

    from oxi_cli.formats.ocio_config import open_config, resolve_display, resolve_space, resolve_view

    text = str(value)
    cuts = [i for i, ch in enumerate(text) if ch == ":"]
    if len(cuts) < count - 1:
        shape = "FROM:TO" if count == 2 else "FROM:DISPLAY:VIEW"
        raise UsageError(f"{label} takes {shape}, got {text!r}")
    cfg = open_config(config)
    first: list[str] | None = None
    for chosen in itertools.combinations(cuts, count - 1):
        bounds = [-1, *chosen, len(text)]
        parts = [text[a + 1 : b].strip() for a, b in itertools.pairwise(bounds)]
        first = first or parts
        try:
            resolve_space(cfg, parts[0])
            if count == 2:
                resolve_space(cfg, parts[1])
            else:
                resolve_view(cfg, resolve_display(cfg, parts[1]), parts[2])
        except UsageError:
            continue
        return parts
    return first or [text]  # no split resolves: the builder names the unknown name


def build_blur(sigma: Any = None, radius: Any = None, label: str = "--") -> Any:
    from oxi_cli.ops import Blur

    if (sigma is None) == (radius is None):
        raise UsageError(f"blur needs exactly one of {label}sigma or {label}radius")
    if sigma is not None:
        return Blur(numbers(f"{label}sigma", sigma, (1,))[0])
    return Blur.from_radius(numbers(f"{label}radius", radius, (1,))[0])


@dataclass(frozen=True)
class ResizeStep:
    """A resize whose pixel size may depend on the image it meets (one side given, a scale, or a box to fit).

    `size` is the one syntax of ops/resize.py; `fit` places a WxH box's picture; `force` lifts the
    8x / 32768-pixel guard; `hint` is how this step's author asks for force (the message says it).
    """

    size: Any  # ops.resize.SizeSpec
    filter: str = "lanczos3"
    fit: str = "fit"
    force: bool = False
    hint: str = "--force"

    def __post_init__(self) -> None:
        from oxi_cli.ops.resize import FILTER_RADIUS, MAX_SIDE, check_fit

        if self.filter not in FILTER_RADIUS:
            raise UsageError(f"unknown resize filter {shown(self.filter)}; choose one of {', '.join(FILTER_RADIUS)}")
        check_fit(self.fit)
        biggest = max(self.size.width, self.size.height)
        if biggest > MAX_SIDE and not self.force:
            raise UsageError(f"resize to {self.size.describe()}: over {MAX_SIDE} pixels a side needs {self.hint}")

    def resolve(self, width: int, height: int, windows: bool = True) -> list[Any]:
        """The ops for a width x height image. A WxH box with fit, pad or fill is a resize that places its
        picture in the box (the display window), then for pad and fill a Place filling the box's pixels;
        `windows` False (the output format has no data/display windows) makes fit pad too, as oiiotool
        writes a fitted PNG or TIFF: the box, bars black and transparent."""
        from oxi_cli.ops import Place, Resize
        from oxi_cli.ops.resize import check_growth, fit_frame, resolved_size

        box = self.size.scale is None and self.size.width > 0 and self.size.height > 0
        if not box or self.fit == "stretch":
            w, h = (self.size.width, self.size.height) if box else resolved_size(self.size, width, height)
            check_growth((width, height), (w, h), self.force, self.hint)
            return [Resize(w, h, self.filter)]  # type: ignore[arg-type]
        f = fit_frame(width, height, self.size.width, self.size.height, self.fit)
        check_growth((width, height), (f.width, f.height), self.force, self.hint)
        resize = Resize(f.width, f.height, self.filter, frame=(f.box_width, f.box_height, f.x, f.y))  # type: ignore[arg-type]
        if f.fills_box() or (self.fit == "fit" and windows):
            return [resize]
        return [resize, Place(f.box_width, f.box_height, f.x, f.y)]


def parse_resize(
    value: Any, filter: str = "lanczos3", label: str = "--resize", *, fit: Any = "fit", force: Any = False,
    hint: str = "--force",
) -> ResizeStep:
    """`--resize` / `resize = ...`: the one size syntax of ops/resize.py (1920x1080, 1920x0, 0x1080, 50%)."""
    from oxi_cli.ops.resize import check_fit, parse_size

    check_fit(str(fit), "fit")
    if not isinstance(force, bool) and str(force).lower() not in ("0", "1", "true", "false"):
        raise UsageError(f"{label} force takes true or false, got {shown(force)}")
    forced = force if isinstance(force, bool) else str(force).lower() in ("1", "true")
    return ResizeStep(parse_size(value, label), filter, str(fit), forced, hint)


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
    """Checked steps, each either fixed ops (colour, blur) or a ResizeStep resolved per image size."""

    steps: list[Any] = field(default_factory=list)
    sources: dict[int, str] = field(default_factory=dict)  # id(op) -> file it came from, for --json

    def computes_anything(self) -> bool:
        """False when every step leaves the pixels as they are at any image size (a copy, an identity CDL)."""
        return any(isinstance(step, ResizeStep) or not all(op.is_identity() for op in step) for step in self.steps)

    def ops_for(self, width: int, height: int, windows: bool = True) -> list[Any]:
        """The op values for an image of this size, sizes flowing through resizes in order; `windows`: the
        output format keeps data and display windows (EXR), see ResizeStep.resolve."""
        ops: list[Any] = []
        for step in self.steps:
            new = step.resolve(width, height, windows) if isinstance(step, ResizeStep) else step
            for op in new:
                if hasattr(op, "out_size"):
                    width, height = op.out_size(width, height)
            ops.extend(new)
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

    def add_ops(self, ops: list[Any], source: Path | None = None) -> None:
        self.steps.append(ops)
        if source is not None:
            for op in ops:
                self.sources[id(op)] = str(source)


def compile_chain(specs: Sequence[OpSpec], force: bool = False) -> Chain:
    """Check every step and load its files once, before any image is touched; `force` (oxi run --force)
    lets every resize go past the upscale guard."""
    chain = Chain()
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
    params = dict(spec.params)
    value = spec.value
    if spec.kind in ("cdl", "blur") and isinstance(value, Mapping):
        params, value = {**value, **params}, None
    elif spec.kind in ("cdl", "blur") and isinstance(value, str) and "=" in value:
        params, value = {**pairs(value, r"[\s;]+"), **params}, None
    unknown = sorted(set(params) - set(PARAMS[spec.kind]))
    if unknown:
        raise UsageError(f"{spec.kind} has no parameter {shown(unknown[0])}; it takes {', '.join(PARAMS[spec.kind])}")
    label = f"{spec.kind} "
    if spec.kind == "cdl":
        file = _path(value, spec) if value is not None else None
        cdl = build_cdl(
            file=file,
            cc_id=_opt_str(params.get("id")),
            style=str(params.get("style", "noclamp")),
            slope=params.get("slope"),
            offset=params.get("offset"),
            power=params.get("power"),
            sat=params.get("sat"),
            label=label,
        )
        if file is None and not params:
            raise UsageError("cdl needs a .cc/.ccc/.cdl file or values such as 'slope=1.1 sat=0.9'")
        chain.add_ops([cdl], file)
    elif spec.kind == "lut3d":
        if value is None:
            raise UsageError("lut3d needs a LUT file")
        path = _path(value, spec)
        chain.add_ops(build_lut(path, str(params.get("interp", "tetrahedral"))), path)
    elif spec.kind == "matrix":
        if value is None:
            raise UsageError("matrix needs 9, 12 or 16 numbers")
        chain.add_ops([build_matrix(value, params.get("offset"), label)])
    elif spec.kind == "resize":
        if value is None:
            raise UsageError("resize needs a size such as 1920x1080, 1920x0 or 50%")
        hint = "force = true in this [[op]]" if spec.base is not None else "--force (or --resize:force=1)"
        label = "resize" if spec.base is not None else spec.where
        chain.steps.append(parse_resize(value, str(params.get("filter", "lanczos3")), label,
                                        fit=params.get("fit", "fit"), force=params.get("force", force), hint=hint))
    elif spec.kind == "blur":
        sigma = params.get("sigma", value)
        chain.add_ops([build_blur(sigma, params.get("radius"), label)])
    elif spec.kind == "colorspace":
        config = _opt_str(params.get("config"))
        source, target = split_names(value, 2, config, spec.where or "colorspace")
        chain.add_ops(build_colorspace(source, target, config))
    elif spec.kind == "display":
        chain.add_ops(_display_step(value, params, spec.where or "display"))
    else:
        raise UsageError(f"unknown operation {spec.kind!r}; use one of {', '.join(OP_KINDS)}")


def _display_step(value: Any, params: Mapping[str, Any], where: str) -> list[Any]:
    """`FROM:DISPLAY:VIEW`, or the display alone with `from` and `view` parameters (as TOML writes it)."""
    config = _opt_str(params.get("config"))
    if "from" in params or "view" in params:
        if "from" not in params or "view" not in params:
            raise UsageError("display needs both from= and view= when the value is only the display")
        source, display, view = str(params["from"]), str(value), str(params["view"])
    else:
        source, display, view = split_names(value, 3, config, where)
    inverse = str(params.get("inverse", "false")).lower() in ("1", "true", "yes")
    return build_display(source, display, view, _opt_str(params.get("look")), inverse, config)


def pairs(text: str, separators: str) -> dict[str, str]:
    """'slope=1.1,1,0.9 sat=0.9' -> {'slope': '1.1,1,0.9', 'sat': '0.9'}."""
    out: dict[str, str] = {}
    for part in (p for p in re.split(separators, text.strip()) if p):
        key, eq, val = part.partition("=")
        if not eq or not key:
            raise UsageError(f"expected key=value, got {shown(part)} in {shown(text)}")
        out[key.strip().replace("-", "_")] = val.strip()
    return out


def _path(value: Any, spec: OpSpec) -> Path:
    if not isinstance(value, str) or not value:
        raise UsageError(f"expected a file name, got {shown(value)}")
    path = Path(value).expanduser()
    return path if path.is_absolute() or spec.base is None else spec.base / path


def _opt_str(v: Any) -> str | None:
    return None if v is None else str(v)


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
        raise FormatError(path, None, f"unknown key {shown(unknown[0])}; a recipe holds {holds}")
    settings: dict[str, Any] = {}
    for table, keys in SETTINGS.items():
        section = doc.get(table, {})
        if not isinstance(section, dict):
            raise FormatError(path, None, f"[{table}] must be a table")
        for key, val in section.items():
            if key not in keys:
                raise FormatError(path, None, f"[{table}] has no setting {shown(key)}; it takes {', '.join(keys)}")
            settings[key] = _setting(path, table, key, val)
    ops = doc.get("op", [])
    if not isinstance(ops, list) or not all(isinstance(o, dict) for o in ops):
        raise FormatError(path, None, "operations are [[op]] tables, e.g. [[op]] then cdl = \"grade.cc\"")
    specs = []
    for n, table in enumerate(ops, 1):
        kinds = [k for k in table if k in OP_KINDS]
        where = f"{path} op {n}"
        if len(kinds) != 1:
            raise FormatError(path, None, f"op {n} needs exactly one of {', '.join(OP_KINDS)}, got {kinds or 'none'}")
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
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise FormatError(path, None, f"[{table}] {key} must be {wanted}; got {shown(value)}")
    limits = {"threads": max_threads(), "jobs": MAX_JOBS}
    if key in limits and not 1 <= value <= limits[key]:
        raise FormatError(path, None, f"[{table}] {key} must be 1..{limits[key]}; got {value}")
    return value
