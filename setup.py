"""Packaging the pyproject.toml cannot express: the top-level wgsl/ folder ships as oxi_cli/wgsl, and the `oxi`
command is a script (bin/oxi: a shell launcher no console-script wrapper can be)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["oxi_cli", "oxi_cli.*"]), "oxi_cli.wgsl"],
    package_dir={"oxi_cli.wgsl": "wgsl"},
    package_data={"oxi_cli.wgsl": ["*.wgsl"]},
    scripts=["bin/oxi"],
)
