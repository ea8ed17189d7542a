"""The image ops on the GPU (resize, blur, place): each a registered kernel found by the op's name, and the
separable two-pass machinery resize and blur share."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from oxi_cli.backends.base import ImageOpTable
from oxi_cli.backends.gpu.context import ALIGN, ELEMENT_BYTES, GpuImage, gpu_errors
from oxi_cli.errors import ProcessingError
from oxi_cli.ops import Blur, ImageOp, Place, Resize

# What this backend computes, by image op name (tests/backends check it against every image op).
IMAGE_OPS = ImageOpTable("GPU")
image_op = IMAGE_OPS.register


class ImageOps:
    """The backend's image-op methods (a part of WgpuBackend, which provides pipelines, buffers and dispatch)."""

    image_ops = IMAGE_OPS

    def spatial(self, src: GpuImage, dst: GpuImage, op: ImageOp) -> None:
        """Run one image op through the kernel registered for its name."""
        IMAGE_OPS.method(op)(self, src, dst, op)

    @image_op("resize")
    @gpu_errors
    def resize(self, src: GpuImage, dst: GpuImage, op: Resize) -> None:
        (sh, sw, c), (dh, dw, dc) = src.shape, dst.shape
        if dc != c:
            raise ProcessingError(f"resize keeps the channel count: source has {c}, destination {dc}")
        ys = self._axis(op, 0, sh, dh)
        xs = self._axis(op, 1, sw, dw)

        def taps(axis: tuple) -> Callable[[int, int, int, int], tuple[int, int]]:
            index, count, *_ = axis

            def bounds(o0: int, o1: int, t0: int, t1: int) -> tuple[int, int]:
                n = np.minimum(count[o0:o1], t1)
                live = n > t0
                if not live.any():
                    return 0, 0
                lo = index[o0:o1, t0][live].min()
                hi = index[np.arange(o0, o1)[live], n[live] - 1].max() + 1
                return int(lo), int(hi)

            return bounds

        index, count = ys[0], ys[1]
        single = int((index[np.arange(dh), count - 1] - index[:, 0]).max()) + 1
        self._separable(
            src, dst, "resize.wgsl",
            vertical=(ys[2], ys[2], single, taps(ys), ys[3]),
            horizontal=(xs[2], xs[2], xs[3]),
        )

    @image_op("blur")
    @gpu_errors
    def blur(self, src: GpuImage, dst: GpuImage, op: Blur) -> None:
        if dst.shape != src.shape:
            raise ProcessingError(f"blur keeps the image size: source {src.shape}, destination {dst.shape}")
        radius = op.radius
        weights = self._table(("blur", op.sigma), lambda: (self._data_buffer(
            op.weights().astype(np.float32), "blur weights"), None))[0]
        h = src.shape[0]

        def bounds(o0: int, o1: int, t0: int, t1: int) -> tuple[int, int]:
            lo = min(max(o0 - radius + t0, 0), h - 1)
            hi = min(max(o1 - 1 - radius + t1 - 1, 0), h - 1) + 1
            return lo, hi

        bind = {3: (weights, 0, weights.size)}
        self._separable(
            src, dst, "blur.wgsl",
            vertical=(radius, 2 * radius + 1, min(2 * radius + 1, h), bounds, bind),
            horizontal=(radius, 2 * radius + 1, bind),
        )

    @image_op("place")
    @gpu_errors
    def place(self, src: GpuImage, dst: GpuImage, op: Place) -> None:
        """Bands of output rows, each with the source rows it copies bound beside it (place.wgsl)."""
        (sh, sw, c), (dh, dw, dc) = src.shape, dst.shape
        if dc != c or dst is src:
            raise ProcessingError(f"place needs a destination apart from its source with {c} channels")
        vec4 = c == 4
        px, elem = (1 if vec4 else c), ELEMENT_BYTES[vec4]
        pipeline = self.pipelines.get("place.wgsl", T="vec4<f32>" if vec4 else "f32", PX=px)
        src_row, dst_row = sw * px, dw * px
        rows = self._rows_per_window(max(sw, dw), px, elem, c)
        encoder = self.device.create_command_encoder()
        cpass = encoder.begin_compute_pass()
        for y0 in range(0, dh, rows):
            n = min(rows, dh - y0)
            lo, hi = (min(max(v - op.y, 0), sh) for v in (y0, y0 + n))  # source rows this band copies
            first = min(lo, sh - 1)  # a band inside a bar binds one row it never reads
            src_w = self._window_of(src.buffer, first * src_row * elem, max(hi - lo, 1) * src_row * elem, elem)
            dst_w = self._window_of(dst.buffer, y0 * dst_row * elem, n * dst_row * elem, elem)
            fields = [src_w[3], dst_w[3], sw, hi - lo, dst_row, src_row, op.x, lo + op.y - y0, n * dst_row]
            bindings = {0: src_w[:3], 1: dst_w[:3], 2: self._uniform(np.array(fields, np.int32))}
            self._dispatch(cpass, pipeline, bindings, n * dst_row)
        cpass.end()
        self.device.queue.submit([encoder.finish()])

    def _separable(
        self,
        src: GpuImage,
        dst: GpuImage,
        shader: str,
        vertical: tuple[int, int, int, Callable[[int, int, int, int], tuple[int, int]], dict],
        horizontal: tuple[int, int, dict],
    ) -> None:
        """Vertical pass src -> scratch (H_out x W_src), then horizontal scratch -> dst (as the CPU does).

        vertical = (aux, taps per output, widest source span of one output, bounds(o0, o1, t0, t1) ->
        source rows [lo, hi) read by outputs o0..o1 through taps t0..t1, bindings);
        horizontal = (aux, taps per output, bindings).
        """
        if dst is src:
            raise ProcessingError(f"{shader.split('.')[0]} needs a destination apart from its source")
        (sh, sw, c), (dh, dw, _) = src.shape, dst.shape
        vec4 = c == 4
        px = 1 if vec4 else c  # shader elements per pixel
        elem = ELEMENT_BYTES[vec4]
        spec = {"T": "vec4<f32>" if vec4 else "f32", "PX": px}
        tmp = GpuImage(self._scratch_buffer("separable", dh * sw * c * 4), (dh, sw, c))
        encoder = self.device.create_command_encoder()
        cpass = encoder.begin_compute_pass()

        v_aux, v_taps, single, bounds, v_bind = vertical
        pipeline = self.pipelines.get(shader, VERTICAL=True, **spec)
        row = sw * px
        for o0, o1, t0, t1, lo, hi in self._vertical_plan(dh, v_taps, single, row * elem, bounds):
            src_w = self._window_of(src.buffer, lo * row * elem, (hi - lo) * row * elem, elem)
            dst_w = self._window_of(tmp.buffer, o0 * row * elem, (o1 - o0) * row * elem, elem)
            ps = _pass(src_w[3], dst_w[3], sh, row, row, o0, lo, t0, t1, t0 > 0, (o1 - o0) * row, v_aux)
            bindings = {0: src_w[:3], 1: dst_w[:3], 2: self._uniform(ps), **v_bind}
            self._dispatch(cpass, pipeline, bindings, (o1 - o0) * row)

        h_aux, _, h_bind = horizontal
        pipeline = self.pipelines.get(shader, VERTICAL=False, **spec)
        src_row, dst_row = sw * px, dw * px
        rows = self._rows_per_window(max(sw, dw), px, elem, c)
        for y0 in range(0, dh, rows):
            n = min(rows, dh - y0)
            src_w = self._window_of(tmp.buffer, y0 * src_row * elem, n * src_row * elem, elem)
            dst_w = self._window_of(dst.buffer, y0 * dst_row * elem, n * dst_row * elem, elem)
            ps = _pass(src_w[3], dst_w[3], sw, dst_row, src_row, 0, 0, 0, 0, False, n * dst_row, h_aux)
            bindings = {0: src_w[:3], 1: dst_w[:3], 2: self._uniform(ps), **h_bind}
            self._dispatch(cpass, pipeline, bindings, n * dst_row)
        cpass.end()
        self.device.queue.submit([encoder.finish()])

    def _vertical_plan(
        self, n_out: int, taps: int, single: int, row_bytes: int,
        bounds: Callable[[int, int, int, int], tuple[int, int]],
    ) -> Iterator[tuple[int, int, int, int, int, int]]:
        """Bands of output rows and chunks of taps whose source rows fit one binding window.

        `single` is the widest span of source rows one output row reads. When it does not fit, taps run
        in chunks; all bands of one chunk run before the next chunk, which adds onto what they left.
        """
        fit = (self._window - ALIGN) // row_bytes
        if fit < 2:
            raise ProcessingError(
                f"two image rows ({row_bytes} bytes each) exceed the GPU binding window "
                f"({self._window} bytes); use --backend cpu"
            )
        chunk = taps if single <= fit else fit // 2
        for t0 in range(0, taps, chunk):
            t1 = min(taps, t0 + chunk)
            o0 = 0
            while o0 < n_out:
                # Largest band [o0, o1) whose source span fits (spans only grow with the band).
                good, bad = o0 + 1, min(n_out, o0 + fit) + 1
                while bad - good > 1:
                    mid = (good + bad) // 2
                    lo, hi = bounds(o0, mid, t0, t1)
                    good, bad = (mid, bad) if hi - lo <= fit else (good, mid)
                lo, hi = bounds(o0, good, t0, t1)
                if hi <= lo:  # no live taps in this chunk: the dispatch only carries dst through
                    lo, hi = 0, 1
                yield o0, good, t0, t1, lo, hi
                o0 = good

    def _axis(self, op: Resize, axis: int, src: int, dst: int) -> tuple:
        """(index, count, aux, bindings) for one resize axis, from the same weights the CPU uses."""
        window = op.rows if axis == 0 else op.cols

        def make() -> tuple[Any, Any]:
            ax = op.weights(axis, src, dst)
            bind = {
                3: whole(self._data_buffer(ax.index.astype(np.int32), "resize index")),
                4: whole(self._data_buffer(ax.weight, "resize weights")),
                5: whole(self._data_buffer(ax.count.astype(np.uint32), "resize count")),
            }
            return ax, bind

        ax, bind = self._table(("resize", op.taps(axis), src, dst, window), make)
        return ax.index, ax.count, int(ax.index.shape[1]), bind

def whole(buffer: Any) -> tuple[Any, int, int]:
    return buffer, 0, buffer.size


def _pass(
    src_base: int, dst_base: int, src_len: int, row_elems: int, src_row_elems: int, o0: int, lo: int,
    t0: int, t1: int, accumulate: bool, total: int, aux: int,
) -> bytes:
    """The `Pass` uniform of separable.wgsl."""
    fields = [src_base, dst_base, src_len, row_elems, src_row_elems, o0, lo, t0, t1, int(accumulate), total, aux]
    return np.array(fields, dtype=np.uint32).tobytes()
