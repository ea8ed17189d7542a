"""Image files in and out: the format (io/formats.py) comes from the extension, writes are atomic."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from oxi_cli.errors import InputError, OxiError, ProcessingError, UsageError, is_machine_failure
from oxi_cli.host import cores
from oxi_cli.image import Image
from oxi_cli.io import formats
from oxi_cli.io.atomic import atomic_output
from oxi_cli.io.common import ImageSpec, format_for, one_line, output_format
from oxi_cli.io.library_log import held_library_log, warn_if_damaged

__all__ = ["ImageSpec", "format_for", "output_codec", "read_image", "read_spec", "set_io_threads", "write_image"]

def _handler(fmt: str, role: str) -> Callable:
    return formats.named(fmt).function(role)


def read_image(path: str | Path) -> Image:
    """Decode a whole image: planes in the file's dtype, meta holding what is needed to write it back."""
    return _read(path, "read")


def _read(path: str | Path, role: str) -> Image | ImageSpec:
    """Run a format's reader ("read") or spec reader ("read_spec") with what its library logs held; a whole
    read that succeeds despite them warns once (a spec read says nothing: the pixels' read speaks for both)."""
    path = Path(path)
    reader = _handler(format_for(path), role)
    with held_library_log() as held:
        try:
            found = reader(path)
        except OSError as e:  # the file vanished or the disk failed mid-read
            raise read_error(path, e) from None
    if role == "read":
        warn_if_damaged(path, held)
    return found


def read_spec(path: str | Path) -> ImageSpec:
    """Size, channel names and metadata from the header alone, for planning before any decoding."""
    return _read(path, "read_spec")


def read_error(path: Path, error: OSError) -> OxiError:
    """The error for an OSError while reading `path`: the disk or memory failing is not the user's input."""
    reason = error.strerror or one_line(error)
    if is_machine_failure(error):
        return ProcessingError(f"{path}: cannot read the file ({reason}); the disk or the machine failed")
    return InputError(f"{path}: cannot read the file ({reason}); check the path")


def write_image(
    image: Image,
    path: str | Path,
    *,
    compression: str | None = None,
    input_path: str | Path | None = None,
    in_place: bool = False,
) -> None:
    """Write `image` in the format of `path`'s extension, atomically, keeping what the format can hold.

    `compression` overrides the codec (EXR names such as zip, piz, dwaa, dwab:45; TIFF: none, deflate, lzw...;
    JPEG: jpeg:QUALITY, see output_codec).
    `input_path` is the file the image came from: writing onto it is refused unless `in_place`.
    Each plane is written as `image.meta.pixel_types[name]`, converted if it arrives as another type.
    """
    path = Path(path)
    fmt = output_format(path, None if input_path is None else Path(input_path), in_place)
    writer = _handler(fmt, "write")
    try:
        with atomic_output(path) as tmp:
            writer(image, tmp, compression)
    except (OxiError, MemoryError):
        raise
    except OSError as e:
        raise ProcessingError(f"cannot write {path}: {e.strerror or e}") from None
    except Exception as e:  # a library's own exception: one line, naming the output, not the temporary
        raise ProcessingError(f"cannot write {path}: {one_line(e)}") from None


def output_codec(fmt: str, compression: str | None, quality: int | None = None) -> str | None:
    """The codec an output of format `fmt` is written with: --compression as given (an EXR level as oiiotool
    spells it: dwab:45), or --quality N for a JPEG as 'jpeg:N'. Checked here, before any work: a codec the
    format lacks or a level out of range is one UsageError line."""
    if quality is not None:
        described = formats.named(fmt)
        if not described.quality:
            takes = ", ".join(f.label for f in formats.FORMATS.values() if f.quality)
            raise UsageError(f"--quality applies to {takes} outputs, not {described.label}{described.codec_hint}")
        if compression is not None and compression.strip().lower() != f"{fmt}:{quality}":
            raise UsageError(f"give {described.label} quality once: --quality {quality} or --compression {compression}")
        compression = f"{fmt}:{quality}"
    if compression is not None:
        _handler(fmt, "codec")(compression)
    return compression


def set_io_threads(n: int | None = None) -> None:
    """Threads for EXR decode/encode; None means one per CPU core (the default set on first use)."""
    from oxi_cli.io import exr

    exr.set_threads(n if n else cores())
