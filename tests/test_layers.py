"""Imports point down (cli -> recipe/batch -> plan/execute -> backends/io/formats -> ops), with no cycles, and
generic code never names an op class."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import oxi_cli

ROOT = Path(oxi_cli.__file__).parent
# Longest prefix wins; a module may import its own layer's siblings only within its own package.
LAYERS = {
    "oxi_cli.service.client": 6,
    "oxi_cli.service.server": 6,
    "oxi_cli.service.worker": 6,
    "oxi_cli.cli": 5,
    "oxi_cli.api": 5,  # the Python API: beside the command, over the same batch runner, recipes and executor
    "oxi_cli.__main__": 6,
    "oxi_cli.recipe": 4,
    "oxi_cli.batch": 4,
    "oxi_cli.plan": 3,
    "oxi_cli.spans": 2,
    "oxi_cli.memory": 0,
    "oxi_cli.execute": 3,
    "oxi_cli.stream": 3,
    "oxi_cli.info": 3,
    "oxi_cli.channels": 2,
    "oxi_cli.backends": 2,
    "oxi_cli.io": 2,
    "oxi_cli.formats": 2,
    "oxi_cli.ops": 1,
    "oxi_cli.errors": 0,
    "oxi_cli.image": 0,
    "oxi_cli.jit": 0,
    "oxi_cli.service": 0,  # paths, protocol, link, control: the standard library only
    "oxi_cli": 0,
}


def _op_classes() -> set[str]:
    """Every op class the ops package defines (ColorOp and ImageOp subclasses, found, not listed: a new op is
    guarded the day it is added)."""
    import importlib
    import inspect
    import pkgutil

    import oxi_cli.ops
    from oxi_cli.ops.base import ColorOp, ImageOp

    found = set()
    for info in pkgutil.iter_modules(oxi_cli.ops.__path__):
        module = importlib.import_module(f"oxi_cli.ops.{info.name}")
        found |= {name for name, value in vars(module).items() if inspect.isclass(value)
                  and issubclass(value, (ColorOp, ImageOp)) and value.__module__ == module.__name__}
    return found - {"ColorOp", "ImageOp"}


OP_CLASSES = _op_classes()
# The package's namespace re-exports the Python API, loaded on first use (oxi_cli/__init__.py's __getattr__): the
# one import that may point up.
FACADE = ("oxi_cli", "oxi_cli.api")
# Where op classes may be named: their home, the kernels that run them, the file readers that build them, and
# (until each op declares its own parameters) recipe.py's builders that turn flags and TOML into op values.
MAY_NAME_OPS = ("oxi_cli.ops", "oxi_cli.backends", "oxi_cli.formats", "oxi_cli.recipe")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> tuple[str, int]:
    prefix = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return prefix, LAYERS[prefix]


def _imports() -> dict[str, list[tuple[str, set[str]]]]:
    """module -> [(imported module, names imported from it)], function-level imports included."""
    found: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)
    for path in ROOT.rglob("*.py"):
        module = _module(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("oxi_cli"):
                found[module].append((node.module, {a.name for a in node.names}))
            elif isinstance(node, ast.Import):
                found[module] += [(a.name, set()) for a in node.names if a.name.startswith("oxi_cli")]
    return found


def test_imports_point_down_the_layers():
    modules = {_module(p) for p in ROOT.rglob("*.py")}
    upward = []
    for module, imported in _imports().items():
        home, level = _layer(module)
        # `from oxi_cli import api` imports the submodule oxi_cli.api, not the package's namespace.
        targets = {f"{t}.{n}" if f"{t}.{n}" in modules else t for t, names in imported for n in names or {""}}
        for target in sorted(targets - {FACADE[1]} if module == FACADE[0] else targets):
            there, target_level = _layer(target)
            sideways = target_level == level and level in (2, 4) and there != home
            if target_level > level or sideways:
                upward.append(f"{module} (layer {level}) imports {target} (layer {target_level})")
    assert upward == []


def test_no_import_cycles_between_modules():
    modules = {_module(p) for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for module, imported in _imports().items():
        for target, names in imported:
            # `from oxi_cli.ops import program` imports the submodule, not the package's namespace.
            for name in names or {""}:
                sub = f"{target}.{name}"
                dest = sub if sub in modules else target
                while dest not in modules and "." in dest:
                    dest = dest.rsplit(".", 1)[0]
                if dest not in (module, "oxi_cli"):
                    graph[module].add(dest)
    cycles = [m for m in list(graph) if _reaches(graph, m, m)]
    assert cycles == []


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False


def test_generic_code_never_names_an_op_class():
    naming = []
    for module, imported in _imports().items():
        if module.startswith(MAY_NAME_OPS):
            continue
        for target, names in imported:
            if target.startswith("oxi_cli.ops") and names & OP_CLASSES:
                naming.append(f"{module} imports {sorted(names & OP_CLASSES)}")
    assert naming == []
