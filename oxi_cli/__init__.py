"""oxi: colour and image processing for production image files; `import oxi_cli as oxi` for the Python API."""

import _signal  # the interpreter's own, loaded before any script: no Python-level import for Ctrl-C to land in
import os
import sys


def _is_command() -> bool:
    """True in the `oxi` command (the console script or `python -m oxi_cli`), which imports this package before
    anything else of oxi; a library user or test runner keeps its own process settings."""
    argv = getattr(sys, "orig_argv", [])
    as_module = any(argv[i] == "-m" and argv[i + 1].split(".")[0] == "oxi_cli" for i in range(len(argv) - 1))
    return as_module or os.path.basename(sys.argv[0]) in ("oxi", "oxi.exe")


def _interrupted(signum: int, frame: object) -> None:
    os.write(2, b"oxi: error: interrupted; nothing was written\n")
    os._exit(130)


# Ctrl-C while the `oxi` command is still importing: exit 130 with one line, never a traceback. First thing in the
# package, so the window before it is the interpreter's own start (bin/oxi's lines before it leave SIGINT's default
# action, a silent exit); the CLI's entry point hands SIGINT back to Python's KeyboardInterrupt once it is ready to
# clean up after itself.
if _is_command() and _signal.getsignal(_signal.SIGINT) in (_signal.default_int_handler, _signal.SIG_DFL):
    _signal.signal(_signal.SIGINT, _interrupted)  # SIGINT guarded from here

__version__ = "0.1.0"

# The public Python API (docs/API.md), defined in oxi_cli/api/ and loaded on first use: the `oxi` command's
# client imports this package on every call and must not pay for it. Everything else is private.
__all__ = [
    # ops as values, chains and recipes
    "Op", "Cdl", "Lut3d", "LutFile", "Matrix", "Resize", "Blur", "ColorSpace", "Display", "Chain", "load_recipe",
    # files
    "process", "FileResult", "Progress",
    # arrays and images
    "apply", "read", "write", "to_array", "from_array", "Image", "ImageMeta",
    # backends
    "probe", "open_backend", "Backend",
    # errors
    "OxiError", "UsageError", "InputError", "FormatError", "OpError", "ProcessingError", "GpuFailure",
    "BackendUnavailable", "Interrupted", "DamagedFileWarning",
]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oxi_cli import api

    value = getattr(api, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# What the processes of the `oxi` command start with, where the user has not set it: the installed command
# (bin/oxi) exports it for the interpreter it starts, and a service is started with it (service/control.py); oxi
# never writes it into a running process's environment. oxi calls no BLAS routine, yet OpenBLAS starts one thread
# per core when numpy is imported: 0.18 s of every run on a 16-core host (python -X importtime, numpy 0.38 s ->
# 0.20 s), and threads a service's dispatcher must not hold when it forks workers. service/paths.py counts it
# in the settings a process binds.
COMMAND_DEFAULTS = {"OPENBLAS_NUM_THREADS": "1"}
