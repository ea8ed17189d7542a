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

    `label`: how messages name it ("GPU"). `opener`: "module:function" taking (device, threads)
    and returning the opened Backend; its module loads on first use, so `oxi --help` imports neither Numba nor
    wgpu. `package`: what to install when that module will not import. `devices`: what --device picks among, or
    "" when the backend has one device (the host). `own_memory`: it computes in memory of its own, admitted apart
    from RAM. `start_hint`: what to do when it fails to start.
    """

    name: str
    label: str
    opener: str
    describer: str
    package: str
    devices: str
    own_memory: bool
    start_hint: str

    @property
    def title(self) -> str:
        return f"the {self.label} backend"

    def open(self, device: int | None, threads: int | None) -> Any:
        try:
            opener: Callable[[int | None, int | None], Any] = load(self.opener)
        except ImportError as exc:
            raise BackendUnavailable(f"{self.title} needs the {self.package} package ({exc}); "
                                     f"pip install {self.package}") from None
        return opener(device, threads)

    def describe(self, problems: list[str]) -> list[dict[str, Any]]:
        try:
            describer = load(self.describer)
        except ImportError as exc:
            problems.append(f"{self.title} cannot load ({exc}): pip install {self.package}")
            return []
        return describer(problems)

    def failed(self, error: BaseException) -> BackendUnavailable:
        """The one line for a backend that raised something unforeseen while it opened."""
        return BackendUnavailable(f"{self.title} failed to start: {type(error).__name__}: {error}; {self.start_hint}")


# The backend the others fall back to: the host's processor, always there.
HOST = "cpu"
KINDS: dict[str, BackendKind] = {
    "cpu": BackendKind("cpu", "CPU", "oxi_cli.backends.cpu.backend:open_cpu",
                       "oxi_cli.backends.cpu.info:describe_devices", "numba", "", False,
                       "check that numba and llvmlite are installed (pip install numba)"),
    "gpu": BackendKind("gpu", "GPU", "oxi_cli.backends.gpu.opening:open_gpu",
                       "oxi_cli.backends.gpu.device:describe_devices", "wgpu", "a GPU adapter",
                       True, "use --backend cpu"),
}


def kind(name: str) -> BackendKind:
    return KINDS[name]
