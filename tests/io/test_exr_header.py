"""EXR header fields are claims: oxi checks them against the file before OpenEXR allocates or reads anything."""

from __future__ import annotations

import itertools
import struct
import sys
import threading
import time
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from oxi_cli.errors import InputError
from oxi_cli.image import Image, ImageMeta
from oxi_cli.io import read_image, read_spec, write_image
from oxi_cli.io.exr_header import CODECS, chunk_count, read_layout
from tests.io.files import planes, read_exr, write_exr

READERS = [read_image, read_spec]


def attributes(data: bytes) -> dict[str, tuple[int, int]]:
    """Attribute name -> (offset of its size field, size) in a one-part file."""
    found, pos = {}, 8
    while data[pos] != 0:
        end = data.index(b"\0", pos)
        tend = data.index(b"\0", end + 1)
        (size,) = struct.unpack_from("<i", data, tend + 1)
        found[data[pos:end].decode()] = (tend + 1, size)
        pos = tend + 5 + size
    return found


def patched(src: Path, dst: Path, name: str, fmt: str, *values: object, at_size: bool = False) -> Path:
    """A copy of `src` with attribute `name`'s value (or its size field) overwritten."""
    data = bytearray(src.read_bytes())
    size_at, _ = attributes(bytes(data))[name]
    struct.pack_into(fmt, data, size_at if at_size else size_at + 4, *values)
    dst.write_bytes(bytes(data))
    return dst


def refused(read, path: Path, *words: str) -> str:
    t0 = time.monotonic()
    with pytest.raises(InputError) as caught:
        read(path)
    assert time.monotonic() - t0 < 1.0
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    for word in words:
        assert word in message, message
    return message


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return write_exr(tmp_path / "small.exr", planes("RGB", (16, 24), "half", seed=3))


@pytest.mark.parametrize("read", READERS)
def test_a_negative_attribute_size_is_corrupt_not_a_loop(tmp_path: Path, small: Path, read):
    _, size = attributes(small.read_bytes())["type"]
    # -(name + type + size field) would point the walk back at the attribute itself, forever.
    bad = patched(small, tmp_path / "neg.exr", "type", "<i", -(len("type\0string\0") + 4), at_size=True)
    refused(read, bad, "truncated or corrupt", "claims")


@pytest.mark.parametrize("read", READERS)
def test_an_attribute_larger_than_the_file_is_corrupt(tmp_path: Path, small: Path, read):
    bad = patched(small, tmp_path / "big.exr", "type", "<i", 1 << 30, at_size=True)
    refused(read, bad, "truncated or corrupt", "claims 1073741824 bytes")


@pytest.mark.parametrize("read", READERS)
def test_a_huge_data_window_in_a_tiny_file_is_refused_before_allocating(tmp_path: Path, small: Path, read):
    bad = patched(small, tmp_path / "wide.exr", "dataWindow", "<iiii", 0, 0, 100_000_000 - 1, 0)
    bad.write_bytes(bad.read_bytes()[:400])
    refused(read, bad, "truncated or corrupt")


@pytest.mark.parametrize("read", READERS)
def test_a_data_window_the_compressed_data_cannot_fill_is_refused(tmp_path: Path, small: Path, read):
    # 60000 x 16 RGB half = 5.5 MiB of zip data could not come from ~2 KB: deflate expands 1032:1 at most.
    wide = write_exr(tmp_path / "src.exr", planes("RGB", (512, 24), "half", seed=4))
    bad = patched(wide, tmp_path / "wide.exr", "dataWindow", "<iiii", 0, 0, 599_999, 511)
    refused(read, bad, "claims 600000x512 pixels", "zip data")


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize(
    ("name", "fmt", "value", "words"),
    [
        ("compression", "<B", 99, "unknown compression code 99"),
        ("lineOrder", "<B", 7, "unknown line order 7"),
        ("dataWindow", "<iiii", (5, 0, 0, 15), "data window is empty"),
    ],
)
def test_invalid_header_values_are_corrupt(tmp_path: Path, small: Path, read, name: str, fmt: str, value, words: str):
    values = value if isinstance(value, tuple) else (value,)
    refused(read, patched(small, tmp_path / "bad.exr", name, fmt, *values), words)


@pytest.mark.parametrize("read", READERS)
def test_a_file_cut_inside_its_offset_table_is_truncated(tmp_path: Path, read):
    src = write_exr(tmp_path / "tall.exr", planes("Y", (400, 8), "half", 5), compression=OpenEXR.NO_COMPRESSION)
    data = src.read_bytes()
    (tmp_path / "cut.exr").write_bytes(data[: data.index(b"\0scanlineimage\0") + 200])
    refused(read, tmp_path / "cut.exr", "truncated or corrupt")


def test_random_line_order_in_a_scanline_file_is_read_and_written_in_stored_order(tmp_path: Path, small: Path):
    # OpenEXR reads such a file but refuses to write one: the output says how its rows are stored.
    src = patched(small, tmp_path / "random.exr", "lineOrder", "<B", 2)
    image = read_image(src)
    write_image(image, tmp_path / "out.exr")
    header, channels = read_exr(tmp_path / "out.exr")
    assert header["lineOrder"] == OpenEXR.INCREASING_Y
    np.testing.assert_array_equal(channels["R"], image.planes["R"])


def test_rows_per_chunk_match_the_installed_openexr(tmp_path: Path):
    for code, (name, _, _) in CODECS.items():
        path = tmp_path / f"{name}.exr"
        try:
            write_exr(path, planes("RGB", (300, 9), "half", code), compression=OpenEXR.Compression(code))
        except (ValueError, RuntimeError):  # a codec this OpenEXR build lacks
            continue
        layout = read_layout(path)
        first = int(np.frombuffer(path.read_bytes()[layout.table_start :][:8], "<u8")[0])
        assert (first - layout.table_start) // 8 == chunk_count(layout.parts[0])[0], name


@pytest.mark.parametrize(
    ("mode", "rounding"),
    list(itertools.product(["ONE_LEVEL", "MIPMAP_LEVELS", "RIPMAP_LEVELS"], ["ROUND_DOWN", "ROUND_UP"])),
)
def test_tile_counts_match_the_offset_tables_openexr_writes(tmp_path: Path, mode: str, rounding: str):
    for (w, h), (tx, ty) in itertools.product([(1, 1), (37, 53), (100, 3), (257, 129)], [(16, 16), (7, 5)]):
        tiles = OpenEXR.TileDescription()
        tiles.xSize, tiles.ySize = tx, ty
        tiles.mode, tiles.roundingMode = getattr(OpenEXR, mode), getattr(OpenEXR, rounding)
        path = write_exr(tmp_path / "t.exr", {"Y": np.zeros((h, w), np.float16)}, type=OpenEXR.tiledimage, tiles=tiles)
        layout = read_layout(path)
        offsets = np.frombuffer(path.read_bytes()[layout.table_start : layout.table_end], "<u8")
        assert int(offsets[offsets > 0].min()) == layout.table_end, (w, h, tx, ty)


def test_a_thread_printing_to_stderr_during_reads_loses_nothing(tmp_path: Path, small: Path, capfd):
    smooth = {c: np.full((64, 64), 0.25 * i, np.float16) for i, c in enumerate("RGB")}
    data = bytearray(write_exr(tmp_path / "smooth.exr", smooth).read_bytes())
    data[-20] ^= 0x40  # inside the zip data: OpenEXR's C core prints while failing to decode it
    broken = tmp_path / "broken.exr"
    broken.write_bytes(bytes(data))
    stop = threading.Event()

    def chatter() -> None:
        for i in range(40):
            print(f"chatter line {i}", file=sys.stderr, flush=True)
            print(f"stdout line {i}", flush=True)
            time.sleep(0.002)
        stop.set()

    thread = threading.Thread(target=chatter)
    thread.start()
    failures = 0
    while not stop.is_set():
        for path in (small, broken):
            try:
                read_image(path)
            except InputError as e:
                assert "EXR_ERR_CORRUPT_CHUNK" in str(e)
                failures += 1
    thread.join()
    out, err = capfd.readouterr()
    assert failures > 0
    assert err.splitlines() == [f"chatter line {i}" for i in range(40)]
    assert out.splitlines() == [f"stdout line {i}" for i in range(40)]


def test_valid_files_read_as_before(tmp_path: Path):
    want = planes("RGBA", (33, 47), "float", 9)
    src = write_exr(tmp_path / "ok.exr", want, compression=OpenEXR.PIZ_COMPRESSION)
    image = read_image(src)
    for name, plane in want.items():
        np.testing.assert_array_equal(image.planes[name].view(np.uint32), plane.view(np.uint32))
    assert read_spec(src).channels == ["R", "G", "B", "A"]
    assert isinstance(image, Image) and isinstance(image.meta, ImageMeta)


@pytest.mark.parametrize("damage", ["cut", "flip"])
def test_info_stats_on_a_damaged_exr_prints_one_line_and_no_library_line(tmp_path: Path, damage: str):
    from tests.cli.conftest import run_oxi

    smooth = {c: np.full((64, 64), 0.25 * i, np.float16) for i, c in enumerate("RGB")}
    data = bytearray(write_exr(tmp_path / "ok.exr", smooth).read_bytes())
    if damage == "cut":
        data = data[: len(data) - 30]
    else:
        data[-20] ^= 0x40  # inside the last chunk's zip data: only decoding finds it
    bad = tmp_path / "bad.exr"
    bad.write_bytes(bytes(data))
    res = run_oxi("info", "--stats", str(bad))
    assert res.returncode == 2
    assert res.stderr.splitlines() == [res.stderr.strip()] and res.stderr.startswith(f"oxi: error: {bad}")
    assert "(EXR_ERR_" not in res.stderr.replace("EXR_ERR_CORRUPT_CHUNK: ", "")  # ours, not OpenEXR's raw line


def test_other_c_code_printing_to_stderr_during_reads_is_passed_on(tmp_path: Path, small: Path, capfd):
    # Another C library writing to C's stderr while OpenEXR's lines are held back: its lines still come out.
    import ctypes

    from oxi_cli.io.native import _glibc

    if not _glibc():
        pytest.skip("C's stderr is only redirected on glibc and macOS")
    libc = ctypes.CDLL(None)
    libc.fputs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    libc.fflush.argtypes = [ctypes.c_void_p]
    c_stderr = ctypes.c_void_p.in_dll(libc, "stderr")
    done = threading.Event()

    def c_chatter() -> None:
        for i in range(30):
            stream = c_stderr.value  # whatever C's stderr is at this moment, as C code would see it
            libc.fputs(f"c line {i}\n".encode(), stream)
            libc.fflush(stream)
            time.sleep(0.002)
        done.set()

    thread = threading.Thread(target=c_chatter)
    thread.start()
    while not done.is_set():
        read_image(small)
    thread.join()
    read_image(small)  # the last held call to end passes on what was written meanwhile
    # All of them; one caught writing just as a held call ended may come out after its successor.
    assert sorted(capfd.readouterr().err.splitlines()) == sorted(f"c line {i}" for i in range(30))
