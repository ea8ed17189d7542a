"""Entry point for `python -m oxi_cli`."""

from oxi_cli.cli.main import run_app

run_app()
