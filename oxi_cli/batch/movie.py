"""A sequence into one review movie: each frame computed as a batch computes a file, handed to the encoder in
frame order (at most --jobs frames in flight), missing or failed frames refused or held; nothing left on failure."""

from __future__ import annotations

import threading
from fractions import Fraction
from pathlib import Path
from typing import Any

from oxi_cli.batch.inputs import Inputs
from oxi_cli.batch.jobs import Job, refuse_beyond_memory
from oxi_cli.batch.naming import OutputTarget, refuse_replacing
from oxi_cli.batch.options import BatchOptions
from oxi_cli.batch.report import FileRecord
from oxi_cli.batch.runner import Batch
from oxi_cli.errors import InputError, UsageError

DEFAULT_FPS = Fraction(24)
# Options of image outputs a movie has no use for: refused rather than silently ignored.
_IMAGE_ONLY = {"name": "--name", "compression": "--compression", "out_type": "--out-type", "cluster": "--cluster",
               "skip_existing": "--skip-existing", "in_place": "--in-place"}


class MovieBatch(Batch):
    """A Batch whose files are the frames of one movie (-o review.mov)."""

    @classmethod
    def plan_outputs(cls, inputs: Inputs, opts: BatchOptions, chain: Any) -> tuple[OutputTarget, list[Job]]:
        movie = Path(str(opts.output))
        for key, flag in _IMAGE_ONLY.items():
            if getattr(opts, key) not in (None, False):
                raise UsageError(f"{flag} is for image outputs; a movie ({movie.name}) takes --codec, --quality "
                                 "(h264/h265), --fps and --burn")
        jobs = [Job(i, item, movie, FileRecord(item.path, movie, frame=item.frame, required=item.required))
                for i, item in enumerate(inputs.items)]
        if not jobs:
            raise UsageError(f"no frames for {movie}; give a sequence such as plate.####.exr")
        if not opts.plan_only:
            refuse_replacing([(jobs[0].item, movie)], opts.overwrite)
        return OutputTarget("movie", movie), jobs

    def __init__(self, *args: Any) -> None:
        from oxi_cli.io.movie import movie_settings

        super().__init__(*args)
        self.single = False  # a one-frame movie is still a movie: its summary counts frames
        opts = self.opts
        self.settings = movie_settings(self.target.path, opts.codec, opts.quality, opts.fps, opts.burn or ())
        self.writer: Any = None
        self.converter: Any = None
        self.header: Any = None
        self._turn = threading.Condition()
        self._next = 0  # the index of the next frame the movie takes
        self._held: set[int] = set()  # frames that will never come (missing, failed): the previous one is held
        self._last: Any = None  # the planes of the last frame encoded, to hold over a gap
        self.holds: list[int] = []

    def _written_as(self, job: Job) -> Path:
        # Planned and resolved as for a TIFF (float, no data window apart: a --fit pad is in the pixels).
        return job.output.with_suffix(".tif")

    # --- the movie around the batch ------------------------------------------------------------------------

    def run(self) -> int:
        missing = [j for j in self.jobs if j.item.missing]
        if missing and not self.opts.continue_on_error:
            from oxi_cli.batch.frames import count_frames, format_frames

            frames = format_frames(j.item.frame or 0 for j in missing)
            raise InputError(f"{self.target.path}: frames {frames} ({count_frames(len(missing))}) are missing; "
                             "render them, or pass --continue-on-error to hold the previous frame over each gap")
        if not self.opts.plan_only:
            self._open_movie()
        try:
            return super().run()
        finally:
            if self.writer is not None:  # a failure of oxi's own, or a second Ctrl-C: nothing is left behind
                self.writer.abort()

    def _run_files(self, pending: Any, running: dict[int, Job]) -> None:
        super()._run_files(pending, running)
        if self.writer is not None:
            self._close(self.report.return_code())

    def _open_movie(self) -> None:
        """Read the first frame's header: picture size, rate, timecode and the display its chain ends on."""
        from oxi_cli.io import read_spec
        from oxi_cli.io.movie import (
            MovieHeader,
            MovieWriter,
            add_frames,
            display_for,
            frames_to_timecode,
            header_timecode,
        )
        from oxi_cli.io.movie_pixels import Converter, even_size
        from oxi_cli.ops.base import chain_colour, chain_size

        first = next((j for j in self.jobs if not j.item.missing), None)
        if first is None:
            raise InputError(f"{self.target.path}: no frame of the sequence is on disk")
        spec = read_spec(first.item.path)
        ops = self.chain.ops_for(spec.width, spec.height, False)
        width, height = chain_size(ops, spec.width, spec.height)
        tag = chain_colour(ops)[1] or _declared_display(spec.meta.header)
        display = display_for(tag, f"the picture written to {self.target.path.name}")
        codec = self.settings.codec
        if display.hdr and codec.depth < 10:
            raise UsageError(f"{display.label} needs 10 bits: {codec.name} has {codec.depth}; use --codec "
                             "prores_hq, h265 or dnxhr_hqx")
        fps = self.settings.fps or _header_fps(spec.meta.header) or DEFAULT_FPS
        timecode = header_timecode(spec.meta.header.get("timeCode"))
        if timecode is not None:  # the movie starts at the range's first frame, which may be a held gap
            timecode = add_frames(timecode, -first.index, fps)
        else:
            start = self.jobs[0].item.frame
            timecode = frames_to_timecode(start if start is not None else 0, fps)
        alpha = codec.alpha and "A" in spec.channels
        coded = even_size(codec, width, height)
        if coded != (width, height) and not self.opts.quiet:
            self.reporter.message(f"oxi: warning: {codec.name} ({codec.sampling}) needs even sizes: the "
                                  f"{width}x{height} frames are padded to {coded[0]}x{coded[1]}, repeating the edge")
        self.frame_size = (width, height)
        self.header = MovieHeader(*coded, fps, timecode, display, alpha)
        self.converter = Converter(codec, display, *coded)
        self.writer = MovieWriter(self.settings, self.header)

    def _close(self, code: int) -> None:
        whole = code == 0 or (self.opts.continue_on_error and not self.report.interrupted
                              and self._next == len(self.jobs) and self._last is not None)
        writer, self.writer = self.writer, None
        if not whole:
            encoder_failed = bool(writer.errors)  # a full disk: holding frames would not help
            writer.abort()
            if not self.report.interrupted:
                hint = "" if encoder_failed else "; --continue-on-error holds the previous frame over failed frames"
                self.reporter.message(f"oxi: error: no movie was written to {self.target.path}{hint}")
            return
        writer.finish()
        if not self.opts.quiet:
            h = self.header
            held = f"; held over {len(self.holds)} missing or failed" if self.holds else ""
            self.reporter.message(f"oxi: wrote {self.target.path}: {writer.frames} frames{held}, "
                                  f"{self.settings.codec.label}, {h.width}x{h.height}, {_rate(h.fps)} fps, "
                                  f"timecode {h.timecode}, {h.display.label}")

    # --- frames, in order ------------------------------------------------------------------------------------

    def _process(self, job: Job, progress: Any) -> Any:
        """Compute the frame (as any batch file, in memory), convert it and hand it to the movie in order."""
        from oxi_cli.execute import FileSource, MemorySink, Result, execute

        refuse_beyond_memory(job)
        raw = self._raw(job)
        backend = self._serialize(raw)
        progress(0, 1)
        selection = self.opts.selection()
        if job.plan is None or job.plan.strategy == "single":
            sink = MemorySink("exr")  # every channel kept as computed: a movie leaves AOVs out silently, by design
            result = execute(job.ops, FileSource(job.item.path, selection.part), sink, backend, out_type="float",
                             layers=selection.layers)
            image = sink.image
        else:
            from oxi_cli.io import read_image
            from oxi_cli.stream import run_in_memory

            image = run_in_memory(job.ops, read_image(job.item.path), backend, job.plan, out_type="float",
                                  out_format="exr", layers=selection.layers)
            result = Result(backend.name, job.plan.width, job.plan.height, image.width, image.height,
                            list(image.planes), strategy=job.plan.strategy)
        planes = self._planes(job, image)
        self._deliver(job.index, planes)
        progress(1, 1)
        return result

    def _planes(self, job: Job, image: Any) -> list[Any]:
        import numpy as np

        from oxi_cli.io.movie import add_frames
        from oxi_cli.io.movie_pixels import draw_burns, pad_to

        if (image.width, image.height) != self.frame_size:
            w, h = self.frame_size
            raise InputError(f"{job.item.path} is {image.width}x{image.height} after the chain, but the movie's "
                             f"frames are {w}x{h}; give frames of one size")
        if not all(c in image.planes for c in "RGB"):
            raise InputError(f"{job.item.path} has no R, G, B picture for a movie frame")
        rgb = np.stack([image.planes[c].astype(np.float32, copy=False) for c in "RGB"], axis=-1)
        if self.settings.burns:
            frame = job.item.frame if job.item.frame is not None else job.index
            stem = job.item.path.stem
            fields = {"frame": frame, "timecode": add_frames(self.header.timecode, job.index, self.header.fps),
                      "shot": _shot(stem, job.item.frame), "name": job.item.path.name, "stem": stem,
                      "fps": _rate(self.header.fps), "codec": self.settings.codec.label}
            draw_burns(rgb, self.settings.burns, fields, self.header.display.white)
        w, h = self.header.width, self.header.height
        alpha = image.planes.get("A") if self.header.alpha else None
        if alpha is not None:
            alpha = pad_to(alpha[..., None].astype(np.float32), w, h)[..., 0]
        return self.converter.planes(pad_to(rgb, w, h), alpha, job.index)

    def _deliver(self, index: int, planes: list[Any]) -> None:
        """Wait for this frame's turn (earlier frames still computing under --jobs), then give it to the encoder,
        after holding the previous frame over any gap just before it."""
        with self._turn:
            while True:
                if self._last is None and all(i in self._held for i in range(self._next, index)):
                    for _ in range(self._next, index):  # frames missing before the first good one show it
                        self.writer.put(planes)
                    self._next = index
                self._flush_held()
                if self._next == index:
                    break
                if self.cancel.is_set():
                    raise KeyboardInterrupt
                self._turn.wait(0.1)
            self.writer.put(planes)
            self._last = planes
            self._next += 1
            self._flush_held()
            self._turn.notify_all()

    def _flush_held(self) -> None:
        """Encode the previous frame again for each held frame now at the front (the caller holds _turn)."""
        while self._next in self._held and self._last is not None:
            self.writer.put(self._last)
            self._next += 1

    def emit(self, rec: FileRecord) -> None:
        super().emit(rec)
        if rec.status in ("missing", "failed") and self.writer is not None and self.opts.continue_on_error:
            index = self._index_of[id(rec)]
            with self._turn:
                self._held.add(index)
                self.holds.append(index)
                self._flush_held()
                self._turn.notify_all()


def _declared_display(header: dict[str, Any]) -> str | None:
    """The display a frame's header says it was made for (colorInteropID, as `oxi display` writes to an EXR)."""
    value = header.get("colorInteropID")
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value if isinstance(value, str) and value.strip().endswith("_display") else None


def _header_fps(header: dict[str, Any]) -> Fraction | None:
    value = header.get("framesPerSecond")
    try:
        rate = Fraction(value) if value is not None else None
    except (TypeError, ValueError):
        return None
    return rate if rate is not None and 1 <= rate <= 240 else None


def _rate(fps: Fraction) -> str:
    return str(fps.numerator) if fps.denominator == 1 else f"{float(fps):.3f}".rstrip("0")


def _shot(stem: str, frame: int | None) -> str:
    from oxi_cli.batch.inputs import InputItem
    from oxi_cli.batch.naming import render_name

    return render_name("{base}", InputItem(Path(stem + ".exr"), frame))
