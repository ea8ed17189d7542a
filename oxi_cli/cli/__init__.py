"""The `oxi` command line: thin commands that parse options, build ops and call the executor."""
