"""The compute backends by the name --backend gives them: what each is, how it opens, what it holds of its own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oxi_cli.errors import BackendUnavailable
from oxi_cli.lazy import load


@dataclass(frozen=True)
class BackendKind:
    """What generic code may ask of a backend without naming it.

    `label`: how messages name it ("GPU"). `home`: its package; each role below is "module:function" there,
    imported on first use, so `oxi --help` imports neither Numba nor wgpu. `opener` takes (device, threads) and
    returns the opened Backend. `describer` takes a problems list and returns `oxi probe`'s rows, one a device.
    `package`: what to install when the opener's module will not import. `devices`: what --device picks among, or
    "" when the backend has one device (the host). `own_memory`: it computes in memory of its own, admitted apart
    from RAM. `start_hint`: what to do when it fails to start.

    A backend with devices also names, in a module that loads none of its libraries: `present() -> bool`, whether
    this machine may have a device `auto` would weigh (from device nodes alone: a False spares loading the
    backend's libraries); `chooser(thorough) -> (index | None, reason)`, the device `auto` weighs against the
    host (none: why not; without `thorough` it may answer from device nodes alone); `holder() -> {index: name}`,
    the devices this process holds open (a warm service worker keeps them); `lister() -> (devices, auto_index,
    any_index)`, every device (each a dict with index, name, driver, kind and api: what `oxi probe --calibrate`
    measures and --device is checked against) and which of them `auto` and this backend forced would open.
    `software`: it may have devices where `present()` says no device node is (wgpu's software adapters), so
    `--device` with auto picks among its devices there.
    """

    name: str
    label: str
    home: str
    opener: str
    describer: str
    package: str
    devices: str
    own_memory: bool
    start_hint: str
    present: str = ""
    chooser: str = ""
    holder: str = ""
    lister: str = ""
    software: bool = False

    def role(self, name: str) -> Any:
        return load(getattr(self, name), package=self.home)

    @property
    def title(self) -> str:
        return f"the {self.label} backend"

    def open(self, device: int | None, threads: int | None) -> Any:
        try:
            opener: Callable[[int | None, int | None], Any] = self.role("opener")
        except ImportError as exc:
            raise BackendUnavailable(f"{self.title} needs the {self.package} package ({exc}); "
                                     f"pip install {self.package}") from None
        return opener(device, threads)

    def describe(self, problems: list[str]) -> list[dict[str, Any]]:
        try:
            describer = self.role("describer")
        except ImportError as exc:
            problems.append(f"{self.title} cannot load ({exc}): pip install {self.package}")
            return []
        return describer(problems)

    def may_have_device(self) -> bool:
        """Whether `auto` may find a device of this backend here, answered without loading its libraries."""
        return bool(self.present) and bool(self.role("present")())

    def auto_device(self, thorough: bool = False) -> tuple[int | None, str]:
        """The device of this backend `auto` weighs against the host, and why; (None, why not) for the host."""
        if not self.chooser:
            return None, f"{self.title} has no devices to choose among"
        return self.role("chooser")(thorough)  # type: ignore[no-any-return]

    def held(self) -> dict[int, str]:
        """The devices this process holds open, by index (their names as values)."""
        return self.role("holder")() if self.holder else {}

    def list_devices(self) -> tuple[list[dict[str, Any]], int | None, int | None]:
        """Its devices (dicts with index, name, driver, kind and api) and which of them `auto` and this backend
        forced open; raises (its library missing, a broken driver) when they cannot be listed."""
        if not self.lister:
            return [], None, None
        return self.role("lister")()  # type: ignore[no-any-return]

    @property
    def device_noun(self) -> str:
        """What one of its devices is called ("GPU adapter")."""
        return self.devices.removeprefix("a ")

    def failed(self, error: BaseException) -> BackendUnavailable:
        """The one line for a backend that raised something unforeseen while it opened."""
        return BackendUnavailable(f"{self.title} failed to start: {type(error).__name__}: {error}; {self.start_hint}")


# The backend the others fall back to: the host's processor, always there.
HOST = "cpu"
KINDS: dict[str, BackendKind] = {
    "cpu": BackendKind("cpu", "CPU", "oxi_cli.backends.cpu", "backend:open_cpu", "info:describe_devices", "numba",
                       "", False, "check that numba and llvmlite are installed (pip install numba)"),
    "cuda": BackendKind("cuda", "CUDA", "oxi_cli.backends.cuda", "backend:open_cuda", "devices:describe_devices",
                        "numba-cuda", "a CUDA device", True, "use --backend gpu or cpu", present="devices:present",
                        chooser="devices:auto_device", holder="devices:held", lister="devices:listed"),
    "gpu": BackendKind("gpu", "GPU", "oxi_cli.backends.gpu", "opening:open_gpu", "device:describe_devices", "wgpu",
                       "a GPU adapter", True, "use --backend cpu", present="device:may_have_hardware_gpu",
                       chooser="device:auto_device", holder="device:held", lister="device:listed", software=True),
}


def kind(name: str) -> BackendKind:
    return KINDS[name]


def with_devices() -> list[BackendKind]:
    """The backends with devices to pick among, in the order `auto` prefers them on a tie: what it weighs against
    the host."""
    return [k for k in KINDS.values() if k.devices and k.name != HOST]
