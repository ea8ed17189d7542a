"""Packaging the pyproject.toml cannot express: the top-level wgsl/ folder ships as oxi_cli/wgsl."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["oxi_cli", "oxi_cli.*"]), "oxi_cli.wgsl"],
    package_dir={"oxi_cli.wgsl": "wgsl"},
    package_data={"oxi_cli.wgsl": ["*.wgsl"]},
)
