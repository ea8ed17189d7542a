"""Image files in and out (EXR, PNG, TIFF, JPEG): the format comes from the extension, writes are atomic."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from oxi_cli.errors import InputError, OxiError, ProcessingError, UsageError, is_machine_failure
from oxi_cli.image import Image
from oxi_cli.io.atomic import atomic_output
from oxi_cli.io.common import ImageSpec, format_for, one_line, output_format
from oxi_cli.io.library_log import held_library_log, warn_if_damaged

__all__ = ["ImageSpec", "format_for", "output_codec", "read_image", "read_spec", "set_io_threads", "write_image"]

# format -> (reader, spec reader, writer, codec check) as module.function in this package; modules load on first
# use so `oxi --help` stays fast. EXR is written by exr_stream, which picks oxi's chunk writer or OpenEXR's.
_HANDLERS = {
    "exr": ("exr.read", "exr.read_spec", "exr_stream.write", "exr.parse_compression"),
    "png": ("raster.read_png", "raster.read_png_spec", "raster.write_png", "raster.png_codec"),
    "tiff": ("raster.read_tiff", "raster.read_tiff_spec", "raster.write_tiff", "raster.tiff_codec"),
    "jpeg": ("raster.read_jpeg", "raster.read_jpeg_spec", "raster.write_jpeg", "raster.jpeg_quality"),
}


def _handler(fmt: str, role: int) -> Callable:
    import importlib

    module_name, function = _HANDLERS[fmt][role].split(".")
    return getattr(importlib.import_module(f"oxi_cli.io.{module_name}"), function)


def read_image(path: str | Path) -> Image:
    """Decode a whole image: planes in the file's dtype, meta holding what is needed to write it back."""
    return _read(path, 0)


def _read(path: str | Path, role: int) -> Image | ImageSpec:
    """Run a reader (role 0) or spec reader (1) with what its library logs held; a whole read that succeeds
    despite them warns once (a spec read says nothing: the pixels' read that follows it speaks for both)."""
    path = Path(path)
    reader = _handler(format_for(path), role)
    with held_library_log() as held:
        try:
            found = reader(path)
        except OSError as e:  # the file vanished or the disk failed mid-read
            raise read_error(path, e) from None
    if role == 0:
        warn_if_damaged(path, held)
    return found


def read_spec(path: str | Path) -> ImageSpec:
    """Size, channel names and metadata from the header alone, for planning before any decoding."""
    return _read(path, 1)


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
    writer = _handler(fmt, 2)
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
        if fmt != "jpeg":
            hint = " (EXR: a DWA level, --compression dwab:45)" if fmt == "exr" else ""
            raise UsageError(f"--quality applies to JPEG outputs, not {fmt.upper()}{hint}")
        if compression is not None and compression.strip().lower() != f"jpeg:{quality}":
            raise UsageError(f"give JPEG quality once: --quality {quality} or --compression {compression}")
        compression = f"jpeg:{quality}"
    if compression is not None:
        _handler(fmt, 3)(compression)
    return compression


def set_io_threads(n: int | None = None) -> None:
    """Threads for EXR decode/encode; None means one per CPU core (the default set on first use)."""
    from oxi_cli.io import exr

    exr.set_threads(n if n else os.cpu_count() or 1)
