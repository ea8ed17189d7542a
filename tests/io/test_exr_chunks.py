"""oxi's own NONE/ZIPS/ZIP chunk codec reads what OpenEXR writes and writes what OpenEXR reads, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import OpenEXR
import pytest

from oxi_cli.io import exr_stream
from oxi_cli.io.exr import read_spec
from oxi_cli.io.exr_chunks import ExrChunkReader, ExrChunkWriter, layout_for
from oxi_cli.io.exr_stream import band_header, header_bytes, header_prefix

CODECS = {"none": OpenEXR.NO_COMPRESSION, "zips": OpenEXR.ZIPS_COMPRESSION, "zip": OpenEXR.ZIP_COMPRESSION}
TYPES = {"R": "half", "G": "half", "B": "float", "id": "uint32"}
DTYPES = {"half": np.float16, "float": np.float32, "uint32": np.uint32}


def planes(height: int, width: int, seed: int, flat: bool = False) -> dict[str, np.ndarray]:
    """HDR values with negatives, NaN and Inf (or one flat colour, which compresses to almost nothing)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, kind in TYPES.items():
        if kind == "uint32":
            out[name] = rng.integers(0, 2**32, (height, width), dtype=np.uint32)
            continue
        v = np.full((height, width), 0.18) if flat else rng.lognormal(-1, 2, (height, width)) * rng.choice([-1, 1])
        if not flat:
            v.flat[rng.integers(0, v.size, 5)] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
        out[name] = v.astype(DTYPES[kind])
    return out


def write_openexr(path: Path, data: dict[str, np.ndarray], codec: str, origin: tuple[int, int]) -> Path:
    h, w = data["R"].shape
    x0, y0 = origin
    header = {
        "compression": CODECS[codec],
        "type": OpenEXR.scanlineimage,
        "dataWindow": (np.array([x0, y0], np.int32), np.array([x0 + w - 1, y0 + h - 1], np.int32)),
        "displayWindow": (np.array([0, 0], np.int32), np.array([w - 1, h - 1], np.int32)),
    }
    OpenEXR.File(header, dict(data)).write(str(path))  # File() turns the dict's arrays into Channels
    return path


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("codec", sorted(CODECS))
@pytest.mark.parametrize("flat", [False, True])
def test_reader_gives_openexrs_pixels_for_any_rows(tmp_path: Path, codec: str, flat: bool):
    data = planes(43, 37, seed=3, flat=flat)
    path = write_openexr(tmp_path / "in.exr", data, codec, origin=(-5, 7))
    spec = read_spec(path)
    layout = layout_for(spec.meta.header, spec.meta.pixel_types)
    assert layout is not None
    with ExrChunkReader(path, layout, header_bytes(path)) as reader:
        for start, stop in [(0, 43), (0, 1), (5, 21), (15, 17), (40, 43), (16, 32)]:
            got = reader.read_rows(start, stop)
            for name in TYPES:
                assert same_bits(got[name], data[name][start:stop]), (name, start, stop)


def test_bands_read_ahead_give_openexrs_pixels_and_a_missed_guess_is_dropped(tmp_path: Path):
    data = planes(100, 23, seed=7)
    path = write_openexr(tmp_path / "in.exr", data, "zip", origin=(0, 0))
    spec = read_spec(path)
    with ExrChunkReader(path, layout_for(spec.meta.header, spec.meta.pixel_types), header_bytes(path)) as reader:
        # Overlapping bands (a blur's halo), a step the read-ahead learns, then a jump it could not guess.
        for start, stop in [(0, 20), (16, 36), (32, 52), (48, 68), (90, 100), (64, 84), (80, 100)]:
            got = reader.read_rows(start, stop)
            for name in TYPES:
                assert same_bits(got[name], data[name][start:stop]), (name, start, stop)
            if (start, stop) == (48, 68):
                assert reader._ahead is not None and reader._ahead[0] == (64, 84)
        assert reader._ahead is not None  # (96, 100), guessed after the last band, never asked for
    assert reader._ahead is None and reader._fd == -1


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_writer_output_reads_back_through_openexr_exactly(tmp_path: Path, codec: str):
    data = planes(50, 29, seed=4)
    source = write_openexr(tmp_path / "in.exr", data, codec, origin=(3, -2))
    meta = read_spec(source).meta
    header = band_header(meta, 29, 50, codec)
    layout = layout_for(header, meta.pixel_types)
    out = tmp_path / "out.exr"
    writer = ExrChunkWriter(out, header_prefix(header, meta.pixel_types, out), layout)
    row = 0
    for rows in (5, 17, 1, 16, 11):  # bands that straddle chunks
        writer.write_rows({n: p[row : row + rows] for n, p in data.items()})
        row += rows
    writer.close()
    with OpenEXR.File(str(out), separate_channels=True) as f:
        back = {n: c.pixels for n, c in f.channels().items()}
        assert f.header()["compression"] == CODECS[codec]
    for name in TYPES:
        assert same_bits(back[name], data[name]), name


@pytest.mark.parametrize("codec", [*sorted(CODECS), "piz"])
@pytest.mark.parametrize("flat", [False, True], ids=["noise", "flat"])
def test_a_whole_image_is_written_byte_for_byte_as_openexr_writes_it(tmp_path: Path, codec: str, flat: bool,
                                                                      monkeypatch):
    """write_image() sends one-part NONE/ZIPS/ZIP files through the chunk writer (in bands of chunks) and the
    rest to OpenEXR: either way the file is the one OpenEXR's own whole-file writer makes. Noise does not
    compress (chunks stored as they are); a flat colour does (chunks deflated)."""
    from oxi_cli.io import exr, read_image, write_image

    height = 16 * exr_stream._CHUNKS_PER_BAND + 21  # more than one band of chunks, the last chunk short
    data = planes(height, 9, seed=5, flat=flat)
    if flat:
        data["id"] = np.full_like(data["id"], 7)  # noise in any channel would keep whole chunks from compressing
    source = write_openexr(tmp_path / "in.exr", data, "zip", origin=(2, -3))
    image = read_image(source)
    ours, theirs = tmp_path / "ours.exr", tmp_path / "theirs.exr"
    exr.write_parts(exr.prepared(image, codec), theirs)
    if codec in CODECS:  # the chunk writer's, not OpenEXR's
        monkeypatch.setattr(exr, "write_parts", lambda *a: pytest.fail("written by OpenEXR"))
    write_image(image, ours, compression=codec)
    assert ours.read_bytes() == theirs.read_bytes()


def test_an_aborted_writer_waits_for_the_bands_still_encoding_and_closes_its_file(tmp_path: Path):
    data = planes(64, 300, seed=6)
    source = write_openexr(tmp_path / "in.exr", data, "zip", origin=(0, 0))
    meta = read_spec(source).meta
    header = band_header(meta, 300, 64, "zip")
    out = tmp_path / "out.exr"
    writer = ExrChunkWriter(out, header_prefix(header, meta.pixel_types, out), layout_for(header, meta.pixel_types))
    for row in (0, 16, 32):  # bands left encoding on the pool when write_rows returns
        writer.write_rows({n: p[row : row + 16] for n, p in data.items()})
    pending = [chunk for _, chunks in writer._encoding for chunk in chunks]
    assert pending
    writer.abort()
    assert all(chunk.done() for chunk in pending)
    assert writer._file.closed


def test_a_chunk_offset_outside_the_file_is_reported_as_corrupt_input(tmp_path: Path):
    from oxi_cli.errors import InputError

    path = write_openexr(tmp_path / "in.exr", planes(20, 8, seed=5), "zip", origin=(0, 0))
    spec = read_spec(path)
    start = header_bytes(path)
    raw = bytearray(path.read_bytes())
    raw[start : start + 8] = (len(raw) + 100).to_bytes(8, "little")
    path.write_bytes(bytes(raw))
    with pytest.raises(InputError, match="corrupt"):
        ExrChunkReader(path, layout_for(spec.meta.header, spec.meta.pixel_types), start)


def test_tiled_and_other_codecs_are_left_to_openexr():
    window = ((0, 0), (9, 9))
    tiled = {"dataWindow": window, "compression": OpenEXR.ZIP_COMPRESSION, "tiles": object()}
    assert layout_for(tiled, {"R": "half"}) is None
    assert layout_for({"dataWindow": window, "compression": OpenEXR.PIZ_COMPRESSION}, {"R": "half"}) is None
    assert layout_for({"dataWindow": window, "compression": OpenEXR.ZIP_COMPRESSION}, {"R": "half"}) is not None
