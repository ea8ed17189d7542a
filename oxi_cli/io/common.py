"""What every image format shares: the header-only spec, extension lookup, input checks and type casts."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from oxi_cli.errors import InputError, ProcessingError, UsageError, is_machine_failure
from oxi_cli.image import PIXEL_DTYPES, ImageMeta, from_float32, to_float32
from oxi_cli.io import formats

# Decoded sizes any image file may claim: too small to matter, so a codec ratio never refuses a tiny image.
FREE_DECODED_BYTES = 16 << 20
_TYPE_OF_DTYPE = {dtype: name for name, dtype in PIXEL_DTYPES.items()}


@dataclass
class ImageSpec:
    """An image's size, channel names (in Image.planes order) and metadata, read without its pixels."""

    width: int
    height: int
    channels: list[str]
    meta: ImageMeta
    parts: list[ImageSpec] = field(default_factory=list)  # the file's other parts, as Image.parts

    def all_parts(self) -> list[ImageSpec]:
        """This part and the file's others, in file order."""
        return [self, *self.parts]


def format_for(path: str | Path) -> str:
    """The name of the format (io/formats.py) that the file name's extension selects."""
    suffix = Path(path).suffix.lower()
    found = formats.by_extension().get(suffix)
    if found is None:
        what = f"extension '{suffix}'" if suffix else "no extension"
        raise InputError(f"{path}: {what} is not an image format oxi knows; use {formats.known_extensions()}")
    return found.name


def output_format(path: Path, input_path: Path | None = None, in_place: bool = False) -> str:
    """The format an output's extension selects, checked before any work: a wrong extension is a usage
    mistake for an output, and writing onto the input is refused unless `in_place`."""
    from oxi_cli.io.atomic import refuse_input_overwrite

    try:
        fmt = format_for(path)
    except InputError as e:
        raise UsageError(str(e)) from None
    if input_path is not None:
        refuse_input_overwrite(Path(path), Path(input_path), in_place)
    return fmt


def holds_windows(path: str | Path) -> bool:
    """Whether the output format keeps a data window apart from the display window. A wrong extension answers
    True: the writer refuses it later, in one line."""
    found = formats.by_extension().get(Path(path).suffix.lower())
    return found is None or found.keeps_windows


def one_line(error: BaseException | str) -> str:
    """A library's message squeezed onto one line (some span several), for oxi's one-line errors."""
    return " ".join(str(error).split())


def check_readable(path: Path) -> None:
    """Fail with one clear line before any library sees a path that cannot be an image file.

    Only regular files (symlinks followed) go on: a FIFO would block the reader, a device never ends.
    """
    from oxi_cli.files import describe_mode

    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; check the path") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise InputError(f"{path} is a symbolic link loop; point it at a real file") from None
        if is_machine_failure(e):
            failed = f"{path}: cannot access the file ({e.strerror}); the disk or the machine failed"
            raise ProcessingError(failed) from None
        raise InputError(f"{path}: cannot access the file ({e.strerror}); check the path") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{path} is a folder, not an image file; pass an image file")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path} is {describe_mode(st.st_mode)}, not a regular file; pass an image file")
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: permission denied; check the file's permissions")
    if st.st_size == 0:
        raise InputError(f"{path} is empty (0 bytes); re-export or re-copy it")


def check_claim(
    path: Path, label: str, width: int, height: int, decoded: int, stored: int, ratio: int, codec: str = ""
) -> None:
    """Refuse a header whose pixels (`decoded` bytes) could not come from `stored` bytes with the codec's
    worst-case `ratio`: a lying header must not make oxi allocate what the file cannot back."""
    if decoded > max(FREE_DECODED_BYTES, ratio * stored):
        data = f"{stored} bytes of {codec} data" if codec else f"{stored} bytes"
        raise InputError(
            f"{path}: the {label} header claims {width}x{height} pixels ({decoded / 2**20:.0f} MiB decoded), "
            f"more than its {data} can hold; the file is corrupt: re-export or re-copy it"
        )


def pixel_type_of(plane: np.ndarray) -> str:
    """The ImageMeta pixel-type name of an array's dtype."""
    try:
        return _TYPE_OF_DTYPE[plane.dtype]
    except KeyError:
        raise UsageError(f"pixel data of type {plane.dtype} cannot be written") from None


def convert_plane(plane: np.ndarray, pixel_type: str) -> np.ndarray:
    """`plane` holding `pixel_type`; the same array when it already does.

    Planes of another type go through float32 with image.py's rules (integers <-> [0, 1]), so a
    float32 working plane and a stored uint8 plane both land on the same values.
    """
    have = pixel_type_of(plane)
    if have == pixel_type:
        return plane
    return from_float32(to_float32(plane, have), pixel_type)


def cast_plane(plane: np.ndarray, pixel_type: str) -> np.ndarray:
    """convert_plane() as a C-contiguous array (what OpenEXR needs: it misreads strided views)."""
    return np.ascontiguousarray(convert_plane(plane, pixel_type))


def ordered_channels(names: list[str]) -> list[str]:
    """R, G, B, A first, then other layers, each layer's own R, G, B, A before its other channels.

    The order oiiotool shows; files list channels alphabetically (A, B, G, R), which nobody wants.
    """
    rank = {"R": 0, "G": 1, "B": 2, "A": 3}

    def key(name: str) -> tuple[int, str, int, str]:
        layer, _, base = name.rpartition(".")
        return (1 if layer else 0, layer, rank.get(base, 4), base)

    return sorted(names, key=key)
