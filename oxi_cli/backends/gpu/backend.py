"""WgpuBackend: the Backend protocol on wgpu storage buffers, every op a WGSL compute dispatch: the colour
program and dispatch machinery here, transfers (transfers.py) and image ops (image_ops.py) beside it."""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import wgpu

from oxi_cli.backends.base import DeviceLimits
from oxi_cli.backends.gpu.context import (
    ALIGN,
    MAX_DIM,
    MAX_GROUPS,
    RUNTIME_BYTES,
    STAGING_BYTES,
    STORAGE_USAGE,
    TABLE_SLABS,
    WORKGROUP,
    AdapterInfo,
    GpuImage,
    gpu_errors,
    open_adapter,
    round_up,
)
from oxi_cli.backends.gpu.image_ops import ImageOps, whole
from oxi_cli.backends.gpu.transfers import COPY_PIECE, Transfers, _shuffle
from oxi_cli.errors import BackendUnavailable, GpuFailure, ProcessingError
from oxi_cli.ops import ColorOp
from oxi_cli.ops.codes import wgsl_entry
from oxi_cli.ops.program import compile_program

__all__ = ["COPY_PIECE", "GpuFailure", "GpuImage", "WgpuBackend", "_shuffle"]


class WgpuBackend(Transfers, ImageOps):
    """Handles are GpuImage device buffers; colour ops run in place on `dst` after a copy when src != dst.

    `window_bytes` caps how much of a buffer one dispatch binds (default: the device's storage binding
    limit, 128 MiB on lavapipe); tests lower it to run the windowed paths on small images.
    `table_window_bytes` does the same for 3D LUT tables, `staging_bytes` for transfer chunks.
    """

    name = "gpu"

    def __init__(
        self,
        adapter: int | None = None,
        *,
        window_bytes: int | None = None,
        table_window_bytes: int | None = None,
        staging_bytes: int = STAGING_BYTES,
    ) -> None:
        if adapter is None:
            from oxi_cli.backends.gpu.device import best, list_adapters

            chosen = best(list_adapters(), gpu_only=False)
            if chosen is None:
                raise BackendUnavailable("no GPU adapter found; run `oxi probe` to see what is missing")
            adapter = chosen.index
        self._ctx = open_adapter(adapter)
        self.adapter: AdapterInfo = self._ctx.info
        self.device = self._ctx.device
        self.pipelines = self._ctx.pipelines
        dev_limits = self.device.limits
        binding = int(dev_limits["max-storage-buffer-binding-size"])
        self._window = min(binding, window_bytes or binding) // ALIGN * ALIGN
        self._table_window = min(binding, table_window_bytes or binding) // ALIGN * ALIGN
        self._max_buffer = int(dev_limits["max-buffer-size"])
        self._chunk = max(ALIGN, min(staging_bytes, self._window) // ALIGN * ALIGN)
        # A chunk of halves widens to twice its bytes, which one binding window must hold.
        self._half_chunk = max(ALIGN, min(staging_bytes, self._window // 2) // ALIGN * ALIGN)
        self._up_stages: list[Any] = []
        self._down_stages: list[Any] = []
        self._scratch: dict[str, Any] = {}
        self._tables: OrderedDict[tuple, tuple[Any, Any]] = OrderedDict()

    # --- protocol: limits, memory -------------------------------------------------------------------

    def limits(self) -> DeviceLimits:
        total = self.adapter.memory or self._max_buffer
        return DeviceLimits(
            max_buffer_bytes=self._max_buffer,
            max_binding_bytes=self._window,
            max_dim=MAX_DIM,
            total_memory=total,
            usable_memory=int(total * 0.6),
            detected=self.adapter.memory is not None,
            shares_host_memory=self.adapter.kind in ("software", "integrated"),
            # Two upload and two download staging buffers: host-visible memory, in the RSS once touched.
            host_overhead=4 * self._chunk,
            runtime_bytes=RUNTIME_BYTES,
        )

    @gpu_errors
    def allocate(self, height: int, width: int, channels: int, half: bool = False) -> GpuImage:
        """float32 on the device whatever `half` says (half leaves as half through download's packing)."""
        shape = (int(height), int(width), int(channels))
        nbytes = math.prod(shape) * 4
        if nbytes > self._max_buffer:
            raise GpuFailure(
                f"a {width}x{height}x{channels} float image ({nbytes / 2**30:.2f} GiB) exceeds the largest "
                f"buffer of {self.adapter.name} ({self._max_buffer / 2**30:.2f} GiB); use --backend cpu"
            )
        pool = self._ctx.pool
        size = round_up(max(nbytes, 16), 16)
        buffer = pool.take(size) or self._buffer(size, STORAGE_USAGE, "image")
        img = GpuImage(buffer, shape)
        img._recycle = weakref.finalize(img, pool.give, buffer)
        img._recycle.atexit = False
        return img

    @property
    def device_label(self) -> str:
        return f"{self.adapter.name} ({self.adapter.api})"

    @gpu_errors
    def finish(self) -> None:
        """Wait until every submitted command has run (reading a buffer waits for the queue; wgpu-py 0.32's
        on_submitted_work_done_sync is broken). For timing; the protocol's download waits by itself.
        """
        self.device.queue.read_buffer(self._scratch_buffer("finish", 16), 0, 16)

    # --- protocol: colour ops --------------------------------------------------------------------------

    @gpu_errors
    def color_chain(self, src: GpuImage, dst: GpuImage, ops: Sequence[ColorOp], has_alpha: bool) -> None:
        """Consecutive colour ops in one dispatch per window: each pixel read and written once."""
        if has_alpha and src.shape[2] < 4:
            raise ProcessingError(f"a colour chain with alpha needs 4 channels, the image has {src.shape[2]}")
        key = ("chain", tuple(ops), bool(has_alpha))  # ops with tables hash by identity; the key keeps them
        program, bindings, slab = self._table(key, lambda: self._program(ops, has_alpha))
        n_ops = int(program.ops.shape[0])
        uniform = self._uniform(np.array([n_ops, slab, 0, 0], np.uint32))
        chain = "\n".join(f"    x = {wgsl_entry(code)}(x, ops[{j}]);" for j, code in enumerate(program.key))
        spec = {"ALPHA": program.uses_alpha, "CHAIN": chain}
        self._color(src, dst, "color.wgsl", spec, uniform, bindings)

    def _program(self, ops: Sequence[ColorOp], has_alpha: bool) -> tuple[Any, dict, int]:
        """The chain compiled by ops.program (as the CPU runs it) and its device buffers.

        Tables are bound as up to four windows of `slab` floats, a multiple of 3 * 64: an RGB entry never
        straddles two windows and every window starts 256-byte aligned.
        """
        program = compile_program(ops, has_alpha)
        floats = int(program.tables.size)
        slab = self._table_window // 4 // 192 * 192
        if floats > slab * TABLE_SLABS:
            raise GpuFailure(
                f"the chain's LUT tables ({floats * 4 / 2**20:.0f} MiB) need more than {TABLE_SLABS} bindings of "
                f"{self._table_window >> 20} MiB on {self.adapter.name}; use --backend cpu"
            )
        slab = min(slab, round_up(floats, 3))
        tables = self._data_buffer(program.tables, "colour tables")
        bindings = {
            2: whole(self._data_buffer(program.ops.astype(np.uint32), "colour ops")),
            3: whole(self._data_buffer(program.params, "colour params")),
        }
        for k in range(TABLE_SLABS):
            first = min(k, (floats - 1) // slab) * slab  # unused bindings repeat the last window
            bindings[4 + k] = (tables, first * 4, min(slab, floats - first) * 4)
        return program, bindings, slab

    # --- dispatch machinery ------------------------------------------------------------------------------

    def _color(
        self,
        src: GpuImage,
        dst: GpuImage,
        shader: str,
        spec: dict[str, Any],
        uniform: tuple[Any, int, int],
        extra: dict[int, tuple[Any, int, int]] | None = None,
    ) -> None:
        h, w, c = src.shape
        if c < 3:
            raise ProcessingError(f"colour ops need R, G, B channels; the image has {c} channel(s)")
        if dst.shape != src.shape:
            raise ProcessingError(f"colour op source {src.shape} and destination {dst.shape} differ")
        vec4 = c == 4
        pipeline = self.pipelines.get(shader, VEC4=vec4, CH=c, **spec)
        encoder = self.device.create_command_encoder()
        if dst is not src:
            encoder.copy_buffer_to_buffer(src.buffer, 0, dst.buffer, 0, round_up(src.nbytes, 4))
        px_bytes = c * 4
        per_window = self._window // px_bytes // 64 * 64  # 64 pixels keep window offsets 256-aligned
        if per_window == 0:
            raise ProcessingError(f"the binding window ({self._window} bytes) is smaller than 64 pixels")
        cpass = encoder.begin_compute_pass()
        pixels = h * w
        for p0 in range(0, pixels, per_window):
            n = min(per_window, pixels - p0)
            bindings = {0: (dst.buffer, p0 * px_bytes, n * px_bytes), 1: uniform, **(extra or {})}
            self._dispatch(cpass, pipeline, bindings, n)
        cpass.end()
        self.device.queue.submit([encoder.finish()])

    def _dispatch(self, cpass: Any, pipeline: Any, bindings: dict[int, tuple[Any, int, int]], threads: int) -> None:
        entries = [
            {"binding": b, "resource": {"buffer": buf, "offset": off, "size": size}}
            for b, (buf, off, size) in bindings.items()
        ]
        group = self.device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)
        groups = max(1, -(-threads // WORKGROUP))
        gx = min(groups, MAX_GROUPS)
        cpass.set_pipeline(pipeline)
        cpass.set_bind_group(0, group)
        cpass.dispatch_workgroups(gx, -(-groups // gx), 1)

    def _rows_per_window(self, width: int, px: int, elem: int, channels: int) -> int:
        """Image rows of `width` pixels one binding window holds (a dispatch binds at most that)."""
        rows = (self._window - ALIGN) // (width * px * elem)
        if rows < 1:
            raise ProcessingError(
                f"one image row ({width} pixels x {channels} channels) exceeds the GPU binding window "
                f"({self._window >> 20} MiB); use --backend cpu"
            )
        return rows

    def _window_of(self, buffer: Any, first: int, nbytes: int, elem: int) -> tuple[Any, int, int, int]:
        """(buffer, aligned offset, size, element index of `first` inside the window)."""
        off = first - first % ALIGN
        size = min(round_up(first + nbytes - off, 16), buffer.size - off)
        if size > self._window:
            raise AssertionError(f"window of {size} bytes planned over the {self._window} byte limit")
        return buffer, off, size, (first - off) // elem

    # --- buffers ------------------------------------------------------------------------------------------

    def _buffer(self, nbytes: int, usage: int, label: str) -> Any:
        return self.device.create_buffer(label=label, size=round_up(max(nbytes, 16), 16), usage=usage)

    def _scratch_buffer(self, key: str, nbytes: int) -> Any:
        buf = self._scratch.get(key)
        if buf is None or buf.size < nbytes:
            buf = self._scratch[key] = self._buffer(nbytes, STORAGE_USAGE, f"scratch {key}")
        return buf

    def _data_buffer(self, array: np.ndarray, label: str) -> Any:
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        padded = np.zeros(round_up(max(data.size, 16), 16), np.uint8)
        padded[: data.size] = data
        return self.device.create_buffer_with_data(label=label, data=padded, usage=STORAGE_USAGE)

    def _uniform(self, params: bytes | np.ndarray) -> tuple[Any, int, int]:
        data = bytes(params) if isinstance(params, bytes) else np.ascontiguousarray(params).tobytes()
        data += b"\0" * (round_up(max(len(data), 16), 16) - len(data))
        buf = self.device.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.UNIFORM)
        return buf, 0, len(data)

    def _table(self, key: Any, make: Callable[[], Any]) -> Any:
        """Device copies of LUTs and weights, kept for the last few ops so tiles don't re-upload them.

        Ops with array fields compare by identity: the op itself is kept in the key so its id stays valid.
        """
        k = (key,) if not isinstance(key, tuple) else key
        found = self._tables.get(k)
        if found is None:
            found = self._tables[k] = make()
            while len(self._tables) > 8:
                self._tables.popitem(last=False)
        self._tables.move_to_end(k)
        return found
