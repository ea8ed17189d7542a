"""oxi: colour and image processing for production image files."""

import os

# oxi calls no BLAS routine, yet OpenBLAS starts one thread per core when numpy is imported: 0.18 s of every
# run on a 16-core host (python -X importtime, numpy 0.38 s -> 0.20 s). A user's own setting still wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"


def _is_command() -> bool:
    """True in the `oxi` command (the console script or `python -m oxi_cli`), which imports this package before
    anything else of oxi; a library user or test runner keeps its own process settings."""
    import sys

    argv = list(getattr(sys, "orig_argv", []))
    as_module = any(argv[i] == "-m" and argv[i + 1].split(".")[0] == "oxi_cli" for i in range(len(argv) - 1))
    return as_module or os.path.basename(sys.argv[0]) in ("oxi", "oxi.exe")


def _guard_startup() -> None:
    """Ctrl-C while the `oxi` command is still importing: exit 130 with one line, never a traceback.

    The CLI's entry point hands SIGINT back to Python's KeyboardInterrupt once it is ready to clean up after
    itself.
    """
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def interrupted(signum: int, frame: object) -> None:
        os.write(2, b"oxi: error: interrupted; nothing was written\n")
        os._exit(130)

    signal.signal(signal.SIGINT, interrupted)


if _is_command():
    _guard_startup()
