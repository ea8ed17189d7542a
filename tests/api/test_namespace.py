"""The public namespace: `import oxi_cli as oxi` exposes the API's names, typed, and loads none of it until asked."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing

import numpy as np
import pytest

import oxi_cli
import oxi_cli.api


def test_the_package_and_the_api_module_list_the_same_public_names():
    assert oxi_cli.__all__ == oxi_cli.api.__all__
    public = {n for n in vars(oxi_cli.api) if not n.startswith("_") and n not in {"arrays", "devices", "files", "ops"}}
    assert public == set(oxi_cli.__all__)


@pytest.mark.parametrize("name", oxi_cli.__all__)
def test_every_public_name_resolves_on_the_package_to_the_api_object(name):
    assert getattr(oxi_cli, name) is getattr(oxi_cli.api, name)
    assert name in dir(oxi_cli)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Sharpen'"):
        oxi_cli.Sharpen  # noqa: B018


def test_importing_the_package_loads_no_api_and_no_heavy_library():
    """The `oxi` command's client imports oxi_cli on every call: the API must cost it nothing."""
    code = "import sys, oxi_cli; print(sorted(m for m in sys.modules if m.startswith('oxi_cli') or m == 'numpy'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "['oxi_cli']"


def test_the_api_loads_no_command_line_library():
    code = ("import sys, oxi_cli as oxi; c = oxi.Cdl(slope=1.1) | oxi.Resize('50%'); "
            "print(sorted(m for m in ('typer', 'click', 'rich') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def _callables() -> list[tuple[str, object]]:
    found = []
    for name in oxi_cli.__all__:
        value = getattr(oxi_cli, name)
        if inspect.isfunction(value):
            found.append((name, value))
        elif inspect.isclass(value) and value.__module__.startswith("oxi_cli.api"):
            found += [(f"{name}.{attr}", fn) for attr, fn in vars(value).items()
                      if inspect.isfunction(fn) and (not attr.startswith("_") or attr == "__init__")]
            found += [(f"{name}.{attr}", p.fget) for attr, p in vars(value).items() if isinstance(p, property)]
    return found


@pytest.mark.parametrize(("name", "function"), _callables(), ids=[n for n, _ in _callables()])
def test_every_public_function_and_method_is_fully_typed(name, function):
    hints = typing.get_type_hints(function, localns={"np": np})  # numpy is imported for type checkers only
    params = [p for p in inspect.signature(function).parameters.values() if p.name not in ("self", "cls")]
    assert [p.name for p in params if p.name not in hints] == []
    assert "return" in hints


@pytest.mark.parametrize("name", oxi_cli.__all__)
def test_every_public_name_is_documented(name):
    value = getattr(oxi_cli, name)
    assert (inspect.getdoc(value) or "").strip(), f"{name} has no docstring"


def test_the_command_process_leaves_its_own_environment_as_it_was_started():
    """The `oxi` command writes nothing into its environment (a service it starts is keyed by that environment):
    its start-up settings come from the launcher that starts it (bin/oxi)."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    code = ("import os, sys; sys.argv[0] = 'oxi'; before = dict(os.environ); import oxi_cli; "
            "print(dict(os.environ) == before)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True)
    assert done.stdout.strip() == "True"


def test_importing_the_package_leaves_the_callers_environment_alone():
    """OPENBLAS_NUM_THREADS=1 is the command's own start-up setting; a Python caller may well call BLAS."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    code = "import os; before = dict(os.environ); import oxi_cli; print(dict(os.environ) == before)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True)
    assert done.stdout.strip() == "True"
