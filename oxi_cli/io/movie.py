"""Review movies (.mov, .mp4) through PyAV: codecs as users name them, colour tags from the display the frames
were made for, frames streamed into the encoder on a thread of their own, the file renamed into place when whole."""

from __future__ import annotations

import contextlib
import queue
import re
import string
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from oxi_cli.errors import OxiError, ProcessingError, UsageError

MOVIE_EXTENSIONS = {".mov": "mov", ".mp4": "mp4"}


@dataclass(frozen=True)
class Codec:
    """A delivery codec as users name it: FFmpeg's encoder, its pixel format and options, what it holds."""

    name: str
    label: str
    encoder: str
    pix_fmt: str
    options: dict[str, str]
    depth: int  # bits per sample
    chroma: tuple[int, int]  # chroma subsampling (x, y): (2, 1) is 4:2:2, (2, 2) 4:2:0, (1, 1) 4:4:4
    alpha: bool = False
    containers: tuple[str, ...] = ("mov",)
    crf: int | None = None  # the default --quality (constant rate factor) of the codecs that take one

    @property
    def sampling(self) -> str:
        return {(2, 1): "4:2:2", (2, 2): "4:2:0", (1, 1): "4:4:4"}[self.chroma] + ("(:4)" if self.alpha else "")


def _prores(name: str, label: str, profile: int, alpha: bool = False) -> Codec:
    fmt = "yuva444p10le" if alpha else ("yuv444p10le" if profile >= 4 else "yuv422p10le")
    chroma = (1, 1) if profile >= 4 else (2, 1)
    # Apple's own four-character code and vendor id: players that read the vendor (Resolve, Avid) take the
    # file for Apple's rather than guessing at an unknown encoder.
    return Codec(name, label, "prores_ks", fmt, {"profile": str(profile), "vendor": "apl0"}, 10, chroma, alpha)


def _dnxhr(name: str, label: str, fmt: str, depth: int, chroma: tuple[int, int]) -> Codec:
    return Codec(name, label, "dnxhd", fmt, {"profile": name}, depth, chroma)


CODECS: dict[str, Codec] = {c.name: c for c in (
    _prores("prores_proxy", "ProRes 422 Proxy", 0),
    _prores("prores_lt", "ProRes 422 LT", 1),
    _prores("prores", "ProRes 422", 2),
    _prores("prores_hq", "ProRes 422 HQ", 3),
    _prores("prores_4444", "ProRes 4444", 4, alpha=True),
    _prores("prores_4444xq", "ProRes 4444 XQ", 5, alpha=True),
    Codec("h264", "H.264 (8-bit 4:2:0)", "libx264", "yuv420p", {"preset": "medium"}, 8, (2, 2),
          containers=("mov", "mp4"), crf=18),
    Codec("h265", "H.265 (10-bit 4:2:0)", "libx265", "yuv420p10le",
          {"preset": "medium", "x265-params": "log-level=error"}, 10, (2, 2), containers=("mov", "mp4"), crf=20),
    _dnxhr("dnxhr_lb", "DNxHR LB", "yuv422p", 8, (2, 1)),
    _dnxhr("dnxhr_sq", "DNxHR SQ", "yuv422p", 8, (2, 1)),
    _dnxhr("dnxhr_hq", "DNxHR HQ", "yuv422p", 8, (2, 1)),
    _dnxhr("dnxhr_hqx", "DNxHR HQX (10-bit)", "yuv422p10le", 10, (2, 1)),
    _dnxhr("dnxhr_444", "DNxHR 444 (10-bit)", "yuv444p10le", 10, (1, 1)),
)}
ALIASES = {"prores_422": "prores", "prores_422_hq": "prores_hq", "prores_422_lt": "prores_lt", "avc": "h264",
           "x264": "h264", "hevc": "h265", "x265": "h265", "dnxhr": "dnxhr_hq"}
DEFAULT_CODEC = {"mov": "prores_hq", "mp4": "h264"}


@dataclass(frozen=True)
class Display:
    """A display's video signal: ISO/IEC 23091-2 (H.273) code points, the Y'CbCr matrix's Kr and Kb, and the
    code value of reference white for burn-ins (BT.2408: 203 cd/m2 in PQ, 75% in HLG)."""

    label: str
    primaries: int
    transfer: int
    matrix: int
    kr: float
    kb: float
    white: float = 1.0
    hdr: bool = False


_BT709 = (1, 0.2126, 0.0722)
_BT2020 = (9, 0.2627, 0.0593)
# By the Color Interop ID of the display colour space the frames were transformed to (OCIO 2.4+ configs name them).
DISPLAYS: dict[str, Display] = {
    "srgb_rec709_display": Display("sRGB", 1, 13, *_BT709),
    "g24_rec709_display": Display("Rec.709 (BT.1886)", 1, 1, *_BT709),
    "g22_rec709_display": Display("Rec.709 gamma 2.2", 1, 4, *_BT709),
    "srgb_p3d65_display": Display("Display P3", 12, 13, *_BT709),
    "pq_rec2020_display": Display("Rec.2100 PQ", 9, 16, *_BT2020, white=0.58, hdr=True),
    "hlg_rec2020_display": Display("Rec.2100 HLG", 9, 18, *_BT2020, white=0.75, hdr=True),
    "pq_p3d65_display": Display("P3-D65 PQ", 12, 16, *_BT2020, white=0.58, hdr=True),
}
TAGGED = "sRGB, Rec.1886 Rec.709, Gamma 2.2 Rec.709, Display P3, Rec.2100-PQ, Rec.2100-HLG or ST2084-P3-D65"

# Rates as editors say them: 23.976 is 24000/1001 exactly, as every NTSC-derived rate.
NAMED_RATES = {"23.976": Fraction(24000, 1001), "23.98": Fraction(24000, 1001), "29.97": Fraction(30000, 1001),
               "47.952": Fraction(48000, 1001), "59.94": Fraction(60000, 1001)}
RATES_HELP = "24, 23.976, 25, 29.97, 30, 48, 50, 59.94, 60 (or N/D, e.g. 24000/1001)"


def movie_container(path: str | Path | None) -> str | None:
    """'mov' or 'mp4' when `path` names a movie output, else None."""
    return MOVIE_EXTENSIONS.get(Path(path).suffix.lower()) if path else None


def codec_for(name: str | None, container: str) -> Codec:
    """The codec `--codec` names (or the container's default), refused when the container cannot hold it."""
    if name is None:
        return CODECS[DEFAULT_CODEC[container]]
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    codec = CODECS.get(ALIASES.get(key, key))
    if codec is None:
        from oxi_cli.ops.values import did_you_mean

        hint = did_you_mean(key, list(CODECS))
        raise UsageError(f"--codec {name!r} is unknown{hint}; use {', '.join(CODECS)}")
    if container not in codec.containers:
        raise UsageError(f"--codec {codec.name} ({codec.label}) goes in a .mov, not a .{container}; "
                         f"write review.mov, or use --codec h264 or h265 for an .mp4")
    return codec


def parse_fps(text: str | float | Fraction) -> Fraction:
    """--fps as editors write it: 24, 23.976 (24000/1001), 29.97, 59.94, 25, 30, 48, 50, 60, or N/D."""
    raw = str(text).strip()
    try:
        rate = NAMED_RATES.get(raw) or (Fraction(raw) if "/" in raw else Fraction(raw).limit_denominator(1001))
    except (ValueError, ZeroDivisionError):
        raise UsageError(f"--fps takes {RATES_HELP}; got {raw!r}") from None
    if not 1 <= rate <= 240:
        raise UsageError(f"--fps must be 1..240 frames per second ({RATES_HELP}); got {raw!r}")
    return rate


def nominal(rate: Fraction) -> int:
    """The whole frames a second a timecode counts (24 for 23.976)."""
    return max(1, round(rate))


def frames_to_timecode(count: int, rate: Fraction) -> str:
    """A non-drop timecode HH:MM:SS:FF counting `count` frames at `rate`'s nominal whole rate."""
    per = nominal(rate)
    count %= 24 * 3600 * per
    frames, seconds = count % per, count // per
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}:{frames:02d}"


def header_timecode(value: Any) -> str | None:
    """An EXR timeCode attribute (OpenEXR.TimeCode) as HH:MM:SS:FF (';' before the frames when drop-frame)."""
    try:
        parts = (int(value.hours), int(value.minutes), int(value.seconds), int(value.frame))
        drop = bool(value.dropFrame)
    except (AttributeError, TypeError, ValueError):
        return None
    h, m, s, f = parts
    return f"{h:02d}:{m:02d}:{s:02d}{';' if drop else ':'}{f:02d}"


def add_frames(start: str, count: int, rate: Fraction) -> str:
    """The timecode `count` frames after `start` (burn-ins), counted as `start`'s (drop-frame kept as non-drop
    arithmetic: burn-ins of drop-frame movies are exact for the first minute, then say the frame count)."""
    h, m, s, f = (int(p) for p in start.replace(";", ":").split(":"))
    per = nominal(rate)
    text = frames_to_timecode(((h * 60 + m) * 60 + s) * per + f + count, rate)
    return text[:8] + ";" + text[9:] if ";" in start else text


PLACES = ("top-left", "top", "top-right", "bottom-left", "bottom", "bottom-right")
BURN_FIELDS = ("shot", "frame", "timecode", "name", "stem", "fps", "codec")
_PLACE = re.compile(r"^(" + "|".join(re.escape(p) for p in sorted(PLACES, key=len, reverse=True)) + r"):")


@dataclass(frozen=True)
class Burn:
    """One --burn text: a template of BURN_FIELDS and where it goes."""

    text: str
    place: str = "bottom-left"


def parse_burn(value: str) -> Burn:
    """'{shot}  {frame}' (bottom left) or 'top-right:{timecode}'; unknown {fields} refused before any work."""
    m = _PLACE.match(value)
    place, text = (m.group(1), value[m.end():]) if m else ("bottom-left", value)
    try:
        names = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
    except ValueError as e:
        raise UsageError(f"--burn {value!r} is not a valid template ({e}); write fields as {{frame}}") from None
    for name in names:
        if name not in BURN_FIELDS:
            known = ", ".join("{" + f + "}" for f in BURN_FIELDS)
            raise UsageError(f"--burn field {{{name}}} is unknown; use {known}, after an optional place "
                             f"({', '.join(PLACES)}:)")
    return Burn(text, place)


@dataclass(frozen=True)
class MovieSettings:
    """One movie's settings, checked before any frame is computed."""

    path: Path
    container: str
    codec: Codec
    quality: int | None  # CRF for codecs that take one (None: the codec's default)
    burns: tuple[Any, ...] = ()  # movie_pixels.Burn values
    fps: Fraction | None = None  # None: from the frames, else 24

    @property
    def crf(self) -> int | None:
        return self.quality if self.quality is not None else self.codec.crf


def movie_settings(path: str | Path, codec: str | None, quality: int | None, fps: str | None,
                   burns: Sequence[str] = ()) -> MovieSettings:
    """Check --codec, --quality, --fps and --burn for the movie at `path` (one line each)."""
    container = movie_container(path)
    assert container is not None
    chosen = codec_for(codec, container)
    if quality is not None:
        if chosen.crf is None:
            raise UsageError(f"--quality is the rate factor of h264 and h265; {chosen.name} ({chosen.label}) has "
                             "a fixed quality by profile: leave --quality out")
        if not 0 <= quality <= 51:
            raise UsageError(f"--quality for {chosen.name} is a constant rate factor, 0..51 (lower is better; "
                             f"default {chosen.crf}), got {quality}")
    rate = parse_fps(fps) if fps is not None else None
    return MovieSettings(Path(path), container, chosen, quality, tuple(parse_burn(b) for b in burns), rate)


def display_for(tag: Any, what: str) -> Display:
    """The display the frames were transformed for, from their colour tag (colour_tags.ColourTag, or a file's
    declared colorInteropID string); refused in one line when a movie cannot say it."""
    if tag is None:
        raise UsageError(f"{what} is not display-referred, so a movie cannot say how to show it: add a display "
                         "transform (oxi display --display ... --view ..., or --colorspace to a display space)")
    interop = tag if isinstance(tag, str) else (tag.interop_id or "")
    name = tag if isinstance(tag, str) else tag.name
    if not isinstance(tag, str) and not tag.display:
        raise UsageError(f"{what} ends in {name!r}, a scene-referred space a movie cannot show: end the chain with "
                         "a display transform (--display ... --view ...)")
    found = DISPLAYS.get(interop.rpartition(":")[2].lower())
    if found is None:
        raise UsageError(f"{what} is for the display {name!r}, which movie colour tags cannot describe; "
                         f"use one of {TAGGED}")
    return found


@dataclass
class MovieHeader:
    """What is known once the first frame is read: the picture size, rate, start timecode and display."""

    width: int
    height: int
    fps: Fraction
    timecode: str
    display: Display
    alpha: bool


_DONE = object()


@dataclass
class MovieWriter:
    """Encodes Y'CbCr frames on a thread of its own into a hidden temporary beside `settings.path`, renamed into
    place by finish(); abort() (any failure, Ctrl-C) deletes it. put() blocks while the encoder is a frame behind,
    so at most two frames wait for it whatever the movie's length."""

    settings: MovieSettings
    header: MovieHeader
    frames: int = 0
    errors: list[BaseException] = field(default_factory=list)

    def __post_init__(self) -> None:
        from oxi_cli.io.atomic import atomic_output

        self._atomic = atomic_output(self.settings.path)
        tmp = self._atomic.__enter__()
        try:
            self._container, self._stream = _open(tmp, self.settings, self.header)
        except BaseException as e:
            self._atomic.__exit__(type(e), e, e.__traceback__)
            raise
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._encode_all, name="oxi-movie", daemon=True)
        self._thread.start()

    def put(self, planes: list[Any]) -> None:
        """Queue one frame's planes (movie_pixels.Converter.planes); raises the encoder's failure, if it had one."""
        while True:
            self._raise()
            if self._stop.is_set():
                raise ProcessingError(f"{self.settings.path}: the movie was abandoned")
            try:
                self._queue.put(planes, timeout=0.1)
                return
            except queue.Full:
                continue

    def _raise(self) -> None:
        if self.errors:
            raise self.errors[0]

    def _encode_all(self) -> None:
        import av

        try:
            while (planes := self._queue.get()) is not _DONE:
                if self._stop.is_set():
                    return
                frame = av.VideoFrame(self.header.width, self.header.height, self.settings.codec.pix_fmt)
                _fill(frame, planes)
                _tag(frame, self.header.display)
                frame.pts = self.frames
                self.frames += 1
                for packet in self._stream.encode(frame):
                    self._container.mux(packet)
            if self._stop.is_set():  # aborted: abort() closes the file and deletes it
                return
            for packet in self._stream.encode():
                self._container.mux(packet)
            self._container.close()
        except BaseException as e:  # ENOSPC, a codec's refusal: said by the thread that puts or finishes
            self.errors.append(_write_error(self.settings.path, e))
            with contextlib.suppress(queue.Empty):
                while True:  # unblock a put() waiting on a full queue
                    self._queue.get_nowait()

    def finish(self) -> None:
        """Flush the encoder, close the file and rename it into place."""
        try:
            self.put(_DONE)
            while self._thread.is_alive():
                self._thread.join(0.1)
            self._raise()
        except BaseException as e:
            self.abort(e)
            raise
        self._atomic.__exit__(None, None, None)

    def abort(self, why: BaseException | None = None) -> None:
        """Stop the encoder (after the frame it is encoding) and delete the temporary: nothing is left behind."""
        self._stop.set()
        with contextlib.suppress(queue.Empty):
            while True:  # frames still queued are dropped, so the end marker always finds room
                self._queue.get_nowait()
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(_DONE)
        while self._thread.is_alive():  # the file is closed only once no thread writes it
            self._thread.join(0.1)
        with contextlib.suppress(Exception):
            self._container.close()
        error = why or ProcessingError("aborted")
        self._atomic.__exit__(type(error), error, None)


def _open(tmp: Path, settings: MovieSettings, header: MovieHeader) -> tuple[Any, Any]:
    import av

    codec = settings.codec
    options = dict(codec.options)
    if settings.crf is not None:
        options["crf"] = str(settings.crf)
    try:
        container = av.open(str(tmp), "w", format=settings.container)
        stream = container.add_stream(codec.encoder, rate=header.fps, options=options)
        stream.width, stream.height, stream.pix_fmt = header.width, header.height, codec.pix_fmt
        stream.time_base = 1 / header.fps
        ctx = stream.codec_context
        ctx.thread_type = "AUTO"
        _tag(ctx, header.display)
        if codec.encoder == "libx265":
            ctx.codec_tag = "hvc1"  # what Apple's players want for HEVC in .mov and .mp4
        stream.metadata["timecode"] = header.timecode
    except (OSError, av.FFmpegError, ValueError) as e:
        raise _write_error(settings.path, e) from None
    return container, stream


def _tag(target: Any, display: Display) -> None:
    target.color_primaries = display.primaries
    target.color_trc = display.transfer
    target.colorspace = display.matrix
    target.color_range = 1  # video (limited) range: what ProRes, DNxHR and H.264/5 deliveries carry


def _fill(frame: Any, planes: list[Any]) -> None:
    """Copy each plane into the frame's own buffers (their rows may be padded)."""
    import numpy as np

    for plane, data in zip(frame.planes, planes, strict=True):
        rows = np.frombuffer(plane, dtype=data.dtype).reshape(plane.height, -1)
        rows[:, : data.shape[1]] = data


def _write_error(path: Path, error: BaseException) -> BaseException:
    if isinstance(error, OxiError | KeyboardInterrupt | MemoryError):
        return error
    from oxi_cli.io.common import one_line

    reason = getattr(error, "strerror", None) or one_line(error)
    return ProcessingError(f"cannot write {path}: {reason}; nothing was left behind")


# --- reading back (oxi info) -------------------------------------------------------------------------------------

_PRIMARIES = {1: "bt709", 9: "bt2020", 12: "smpte432 (P3-D65)", 11: "smpte431 (P3-DCI)", 2: "unspecified"}
_TRANSFERS = {1: "bt709", 4: "gamma22", 13: "iec61966-2-1 (sRGB)", 16: "smpte2084 (PQ)", 18: "arib-std-b67 (HLG)",
              14: "bt2020-10", 2: "unspecified"}
_MATRICES = {1: "bt709", 9: "bt2020nc", 5: "bt470bg", 6: "smpte170m", 2: "unspecified", 0: "rgb"}
_RANGES = {1: "video (limited)", 2: "full", 0: "unspecified"}


def describe(path: str | Path) -> dict[str, Any]:
    """A movie's codec, size, frames, rate, start timecode and colour tags, as `oxi info` shows them."""
    import av

    path = Path(path)
    try:
        with av.open(str(path)) as container:
            video = container.streams.video[0]
            ctx = video.codec_context
            frames = video.frames or sum(1 for _ in container.demux(video))
            display = next((d.label for d in DISPLAYS.values()
                            if (d.primaries, d.transfer, d.matrix) ==
                            (int(ctx.color_primaries), int(ctx.color_trc), int(ctx.colorspace))), None)
            rate = video.average_rate or video.guessed_rate
            return {
                "path": str(path), "format": movie_container(path) or container.format.name,
                "file_bytes": path.stat().st_size, "codec": _codec_name(ctx), "width": ctx.width,
                "height": ctx.height, "pix_fmt": ctx.pix_fmt, "frames": frames,
                "fps": f"{rate.numerator}/{rate.denominator}" if rate else None,
                "fps_decimal": round(float(rate), 3) if rate else None,
                "timecode": video.metadata.get("timecode") or container.metadata.get("timecode"),
                "colour": {
                    "primaries": _PRIMARIES.get(int(ctx.color_primaries), str(int(ctx.color_primaries))),
                    "transfer": _TRANSFERS.get(int(ctx.color_trc), str(int(ctx.color_trc))),
                    "matrix": _MATRICES.get(int(ctx.colorspace), str(int(ctx.colorspace))),
                    "range": _RANGES.get(int(ctx.color_range), str(int(ctx.color_range))),
                    "display": display,
                },
            }
    except (OSError, av.FFmpegError, IndexError) as e:
        from oxi_cli.errors import InputError
        from oxi_cli.io.common import one_line

        raise InputError(f"{path}: not a movie oxi can read ({one_line(e)})") from None


_PRORES_PROFILES = {"proxy": "prores_proxy", "lt": "prores_lt", "standard": "prores", "hq": "prores_hq",
                    "4444": "prores_4444", "xq": "prores_4444xq"}


def _codec_name(ctx: Any) -> str:
    """The name --codec takes (prores_hq for ProRes 422 HQ), from the decoder's name and profile."""
    profile = str(ctx.profile or "").lower()
    if ctx.name == "prores" and profile in _PRORES_PROFILES:
        return _PRORES_PROFILES[profile]
    if ctx.name == "dnxhd" and profile.startswith("dnxhr"):
        return profile.replace(" ", "_")
    return {"hevc": "h265"}.get(ctx.name, ctx.name)
