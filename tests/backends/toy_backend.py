"""A third backend for the registry tests: the Numba kernels under another name, with one device of its own."""

from __future__ import annotations

from typing import Any

from oxi_cli.backends.cpu.backend import CpuBackend

OPENED: dict[int, str] = {}


class ToyBackend(CpuBackend):
    name = "toy"


def open_toy(device: int | None, threads: int | None) -> ToyBackend:
    OPENED[device or 0] = "toy device"
    return ToyBackend(threads)


def describe_devices(problems: list[str]) -> list[dict[str, Any]]:
    return [{"index": 0, "name": "toy device", "kind": "toy", "rates": {"source": "defaults"}}]


def present() -> bool:
    return True


def auto_device(thorough: bool) -> tuple[int | None, str]:
    return 0, "toy device 0 ranks first"


def held() -> dict[int, str]:
    return dict(OPENED)


def listed() -> tuple[list[dict[str, Any]], int | None, int | None]:
    return [{"index": 0, "name": "toy device", "driver": "toy 1", "kind": "toy", "api": "none"}], 0, 0


def no_auto_device(thorough: bool) -> tuple[int | None, str]:
    return None, "only a software toy device here"
