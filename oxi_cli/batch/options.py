"""Everything a processing command was asked to do besides its operations: one value object and its checks."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oxi_cli.errors import BackendUnavailable, UsageError
from oxi_cli.limits import MAX_JOBS, THREADS_PER_CORE, max_threads

if TYPE_CHECKING:
    from oxi_cli.channels import Selection

OVERWRITE_ENV = "OXI_OVERWRITE"


@dataclass
class BatchOptions:
    """None means 'not given': a recipe's setting, then the default, applies."""

    output: str | None = None
    name: str | None = None
    recipe_name: str | None = None  # a recipe's [output] name: used for folder outputs, ignored for patterns
    frames: str | None = None
    recursive: bool = False
    jobs: int | None = None
    cluster: str | None = None  # a Dask scheduler address, `local` or `local:N` (batch/cluster.py)
    # Sizes as given (512M, 2G, a recipe's number) until check() reads them into bytes, which flow on from there.
    memory_budget: int | str | None = None
    vram_limit: int | str | None = None
    strategy: str | None = None
    plan_only: bool = False
    skip_existing: bool = False
    overwrite: bool = False  # --overwrite, or env OXI_OVERWRITE=1 (see check())
    continue_on_error: bool = False
    json: bool = False
    quiet: bool = False
    verbose: bool = False  # --verbose: a line of details per file done (batch/progress.py)
    backend: str | None = None
    device: int | None = None
    threads: int | None = None
    out_type: str | None = None
    compression: str | None = None
    quality: int | None = None  # a JPEG output's, 1-100 (io/raster.py JPEG_QUALITY when not given); a movie's CRF
    codec: str | None = None  # a movie output's (io/movie.py CODECS; default by container)
    fps: str | None = None  # a movie output's rate, as given (io/movie.parse_fps); None: the frames', else 24
    burn: list[str] | None = None  # a movie output's burn-ins ('[place:]template', io/movie_pixels.parse_burn)
    in_place: bool = False
    part: str | None = None
    layers: str | None = None
    mip_level: int | None = None
    unpremult: bool | None = None  # None: a recipe's [run] unpremult, else off
    debug: bool = False

    def apply_settings(self, settings: dict[str, object]) -> None:
        """Fill options not given on the command line from a recipe's [output] / [run] settings."""
        for key, value in settings.items():
            if key == "name":
                key = "recipe_name"
            if getattr(self, key) is None:
                setattr(self, key, value)

    @property
    def movie(self) -> bool:
        """Whether the output is a movie (-o review.mov): the frames of one file, not a file each."""
        from oxi_cli.io.movie import movie_container

        return movie_container(self.output) is not None

    def selection(self) -> Selection:
        """The part, layers and level each file is processed with (channels.Selection)."""
        from oxi_cli.channels import LayerRule, Selection  # the channels' rules import numpy: not for --help

        return Selection(self.part, LayerRule.parse(self.layers), self.mip_level)

    def check(self) -> None:
        """Ranges every source of a value (flag, recipe, default) must respect; one UsageError line each."""
        top = max_threads()
        if self.threads is not None and not 1 <= self.threads <= top:
            raise UsageError(f"--threads must be 1..{top} ({THREADS_PER_CORE} per CPU core), got {self.threads}")
        if self.quality is not None and not 1 <= self.quality <= 100 and not self.movie:
            raise UsageError(f"--quality must be 1..100 (a JPEG's; default 95), got {self.quality}")
        if self.jobs is not None and not 1 <= self.jobs <= MAX_JOBS:
            raise UsageError(f"--jobs must be 1..{MAX_JOBS}, got {self.jobs}")
        if self.mip_level not in (None, 0):
            raise UsageError(f"--mip-level takes 0 (the top level, the only level oxi reads), got {self.mip_level}")
        self.selection()  # --layers' spelling
        if self.device is not None and self.device < 0:
            raise UsageError(f"--device takes an adapter index from `oxi probe` (0, 1, ...), got {self.device}")
        if self.quiet and self.verbose:
            raise UsageError("--quiet prints nothing on success and --verbose prints more; give one")
        if self.overwrite and self.skip_existing:
            raise UsageError("--overwrite replaces existing outputs and --skip-existing keeps them; give one")
        from oxi_cli.memory import parse_bytes

        if self.memory_budget is not None:
            self.memory_budget = parse_bytes(self.memory_budget, "--memory-budget")
        if self.vram_limit is not None:
            self.vram_limit = parse_bytes(self.vram_limit, "--vram-limit")
        # The environment's consent (a farm's task scripts) yields to --skip-existing on the command line.
        self.overwrite = self.overwrite or (not self.skip_existing and _env_switch(OVERWRITE_ENV))


def check_device(opts: BatchOptions, chain: Any) -> None:
    """--device N / a --backend with devices must name a device that exists even when the job has nothing to
    compute (a copy never opens the device, which is where the index is checked otherwise)."""
    from oxi_cli.backends import registry
    from oxi_cli.backends.select import device_backend, resolve_choice

    kind = resolve_choice(opts.backend, opts.device)
    picks_device = kind != "auto" and bool(registry.kind(kind).devices)
    if chain.computes_anything() or (opts.device is None and not picks_device):
        return
    backend = registry.kind(kind if kind != "auto" else device_backend())
    noun = backend.device_noun
    try:
        devices, _, _ = backend.list_devices()
    except Exception as e:  # no library, no loader: the device asked for is not there
        raise BackendUnavailable(f"no {noun} can be listed ({type(e).__name__}: {e}); see `oxi probe`") from None
    if opts.device is not None and opts.device not in {d["index"] for d in devices}:
        found = f"{noun}s {', '.join(str(d['index']) for d in devices)}" if devices else f"no {noun}"
        raise UsageError(f"--device {opts.device} does not exist: this machine has {found}; see `oxi probe`")
    if not devices:
        raise BackendUnavailable(f"--backend {kind}: no {noun} found; see `oxi probe`")


def _env_switch(name: str) -> bool:
    """An environment variable read as a switch: unset or empty is off."""
    from oxi_cli.ops.values import switch

    value = os.environ.get(name, "").strip()
    return bool(value) and switch(name, value)
