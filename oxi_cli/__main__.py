"""Entry point for `python -m oxi_cli`: the same as the `oxi` command."""

from oxi_cli.service.client import main

main()
