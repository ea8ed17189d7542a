"""PNG, TIFF and JPEG round trips: 16 bits stay 16 bits, floats stay bit-exact, JPEG stays close."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import PIL.Image
import png
import pytest
import tifffile

from oxi_cli.errors import UsageError
from oxi_cli.image import Image, from_float32, to_float32
from oxi_cli.io import read_image, read_spec, write_image
from tests.io.files import assert_same_planes, bits, planes, write_exr

SHAPE = (29, 41)


def stack(image: Image, names: str | list[str]) -> np.ndarray:
    return np.stack([image.planes[n] for n in names], axis=-1)


def pypng_write(path: Path, pixels: np.ndarray) -> Path:
    """An independent PNG writer (pure Python), so oxi's reader is checked against someone else's file."""
    h, w = pixels.shape[:2]
    count = 1 if pixels.ndim == 2 else pixels.shape[2]
    writer = png.Writer(w, h, greyscale=count <= 2, alpha=count in (2, 4), bitdepth=8 * pixels.dtype.itemsize)
    with open(path, "wb") as f:
        writer.write(f, pixels.reshape(h, -1))
    return path


def pypng_read(path: Path) -> tuple[np.ndarray, dict]:
    w, h, rows, info = png.Reader(filename=str(path)).read()
    pixels = np.vstack([np.asarray(r) for r in rows]).reshape(h, w, -1)
    return pixels, info


def smooth_rgb(h: int, w: int, seed: int) -> np.ndarray:
    """Gradients plus a little noise: content JPEG is made for, so its error stays small."""
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x / w, y / h, (x + y) / (w + h)], axis=-1) * 200 + 20
    noise = np.random.default_rng(seed).normal(0, 2, base.shape)
    return np.clip(base + noise, 0, 255).astype(np.uint8)


# --- PNG ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("names", ["RGB", "RGBA"])
def test_16_bit_png_round_trip_is_bit_exact_and_stays_16_bit(tmp_path: Path, names: str):
    want = np.stack(list(planes(names, SHAPE, "uint16", seed=1).values()), axis=-1)
    image = read_image(pypng_write(tmp_path / "in.png", want))
    assert image.channels == list(names)
    assert set(image.meta.pixel_types.values()) == {"uint16"}
    np.testing.assert_array_equal(stack(image, names), want)
    write_image(image, tmp_path / "out.png")
    got, info = pypng_read(tmp_path / "out.png")
    assert info["bitdepth"] == 16 and info["alpha"] == ("A" in names)
    np.testing.assert_array_equal(got, want)


def test_8_bit_png_round_trip_is_exact(tmp_path: Path):
    want = np.stack(list(planes("RGB", SHAPE, "uint8", seed=2).values()), axis=-1)
    image = read_image(pypng_write(tmp_path / "in.png", want))
    assert image.meta.pixel_types == dict.fromkeys("RGB", "uint8")
    write_image(image, tmp_path / "out.png")
    got, info = pypng_read(tmp_path / "out.png")
    assert info["bitdepth"] == 8
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("kind", "alpha"), [("uint8", False), ("uint16", False), ("uint16", True)])
def test_gray_png_reads_as_y_and_round_trips(tmp_path: Path, kind: str, alpha: bool):
    names = ["Y", "A"] if alpha else ["Y"]
    want = np.stack(list(planes(names, SHAPE, kind, seed=3).values()), axis=-1)
    image = read_image(pypng_write(tmp_path / "in.png", want if alpha else want[..., 0]))
    assert image.channels == names
    write_image(image, tmp_path / "out.png")
    got, info = pypng_read(tmp_path / "out.png")
    assert info["greyscale"] and info["alpha"] == alpha and info["bitdepth"] == 8 * want.dtype.itemsize
    np.testing.assert_array_equal(got, want)


def test_palette_png_with_transparency_reads_as_rgba_and_spec_agrees(tmp_path: Path):
    rgba = np.stack(list(planes("RGBA", SHAPE, "uint8", seed=4).values()), axis=-1)
    rgba[..., 3] = np.where(rgba[..., 3] > 127, 255, 0)
    paletted = PIL.Image.fromarray(rgba, "RGBA").quantize(colors=16)
    paletted.save(tmp_path / "in.png")
    image, spec = read_image(tmp_path / "in.png"), read_spec(tmp_path / "in.png")
    np.testing.assert_array_equal(stack(image, "RGBA"), np.asarray(paletted.convert("RGBA")))
    assert spec.channels == image.channels == list("RGBA")
    assert (spec.width, spec.height) == (image.width, image.height) == (SHAPE[1], SHAPE[0])


@pytest.mark.parametrize(("names", "kind"), [("RGB", "uint16"), ("RGBA", "uint8"), (["Y"], "uint16")])
def test_png_spec_matches_the_decoded_image(tmp_path: Path, names, kind: str):
    want = np.stack(list(planes(names, SHAPE, kind, seed=5).values()), axis=-1)
    src = pypng_write(tmp_path / "in.png", want if want.shape[2] > 1 else want[..., 0])
    spec, image = read_spec(src), read_image(src)
    assert spec.channels == image.channels
    assert spec.meta.pixel_types == image.meta.pixel_types
    assert (spec.width, spec.height) == (image.width, image.height)


def test_png_refuses_float_types_and_names_the_out_types(tmp_path: Path):
    image = read_image(write_exr(tmp_path / "in.exr", planes("RGB", SHAPE, "half", seed=6)))
    with pytest.raises(UsageError, match="PNG stores uint16 or uint8, not half; use --out-type uint16 or uint8"):
        write_image(image, tmp_path / "out.png")
    assert not (tmp_path / "out.png").exists()


def test_exr_to_16_bit_png_keeps_rgba_and_drops_other_layers(tmp_path: Path):
    want = {**planes("RGBA", SHAPE, "half", seed=7), **planes(["diffuse.R", "Z"], SHAPE, "half", 9)}
    image = read_image(write_exr(tmp_path / "in.exr", want, shot="sh010"))
    work = {n: np.clip(to_float32(p, "half"), 0, 1) for n, p in image.planes.items()}
    types = dict.fromkeys(work, "uint16")
    write_image(Image(image.width, image.height, work, replace(image.meta, pixel_types=types)), tmp_path / "o.png")
    got, info = pypng_read(tmp_path / "o.png")
    assert info["bitdepth"] == 16 and info["planes"] == 4
    expected = np.stack([from_float32(work[c], "uint16") for c in "RGBA"], axis=-1)
    np.testing.assert_array_equal(got, expected)


def test_compression_option_is_refused_for_png(tmp_path: Path):
    image = read_image(pypng_write(tmp_path / "in.png", planes(["Y"], SHAPE, "uint8", seed=8)["Y"]))
    with pytest.raises(UsageError, match="--compression applies to EXR and TIFF outputs, not PNG"):
        write_image(image, tmp_path / "out.png", compression="zip")


# --- TIFF --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "kind", "codec"),
    [
        ("RGB", "uint16", "adobe_deflate"),
        ("RGBA", "uint16", "lzw"),
        ("RGBA", "float", "adobe_deflate"),
        (["Y"], "uint8", None),
    ],
)
def test_tiff_round_trip_is_bit_exact_and_keeps_compression(tmp_path: Path, names, kind: str, codec):
    want = np.stack(list(planes(names, SHAPE, kind, seed=10).values()), axis=-1)
    if len(names) == 1:
        want = want[..., 0]
    extras = {"extrasamples": ["unassalpha"]} if "A" in names else {}
    photometric = "rgb" if len(names) >= 3 else "minisblack"
    tifffile.imwrite(tmp_path / "in.tif", want, compression=codec, photometric=photometric, **extras)
    image = read_image(tmp_path / "in.tif")
    assert image.channels == list(names)
    assert set(image.meta.pixel_types.values()) == {kind}
    write_image(image, tmp_path / "out.tif")
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        page = tif.pages.first
        got = page.asarray()
        assert page.compression == tifffile.TiffFile(tmp_path / "in.tif").pages.first.compression
        assert page.extrasamples == ((tifffile.EXTRASAMPLE.UNASSALPHA,) if "A" in names else ())
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(bits(got), bits(want))


def test_tiff_predictor_and_resolution_are_kept(tmp_path: Path):
    want = np.stack(list(planes("RGB", SHAPE, "float", seed=11).values()), axis=-1)
    tifffile.imwrite(
        tmp_path / "in.tif",
        want,
        photometric="rgb",
        compression="zlib",
        predictor=True,
        resolution=(300, 300),
        resolutionunit=2,
    )
    write_image(read_image(tmp_path / "in.tif"), tmp_path / "out.tif")
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        page = tif.pages.first
        assert page.predictor == 3  # floating-point predictor, as the input had
        assert page.tags["XResolution"].value == (300, 1) and page.tags["ResolutionUnit"].value == 2
        np.testing.assert_array_equal(bits(page.asarray()), bits(want))


def test_planar_tiff_reads_as_the_same_planes(tmp_path: Path):
    want = planes("RGB", SHAPE, "uint16", seed=12)
    tifffile.imwrite(tmp_path / "in.tif", np.stack(list(want.values())), planarconfig="separate", photometric="rgb")
    image = read_image(tmp_path / "in.tif")
    assert_same_planes(image.planes, want)


def test_tiff_compression_override_and_unknown_name(tmp_path: Path):
    tifffile.imwrite(tmp_path / "in.tif", planes(["Y"], SHAPE, "uint16", seed=13)["Y"])
    image = read_image(tmp_path / "in.tif")
    write_image(image, tmp_path / "out.tif", compression="lzw")
    assert tifffile.TiffFile(tmp_path / "out.tif").pages.first.compression == tifffile.COMPRESSION.LZW
    with pytest.raises(UsageError, match="unknown TIFF compression 'zipp'; use one of none, deflate, lzw"):
        write_image(image, tmp_path / "bad.tif", compression="zipp")


def test_tiff_spec_matches_the_decoded_image(tmp_path: Path):
    rgba = np.stack(list(planes("RGBA", SHAPE, "float", 14).values()), axis=-1)
    tifffile.imwrite(tmp_path / "in.tif", rgba, photometric="rgb", extrasamples=["assocalpha"])
    spec, image = read_spec(tmp_path / "in.tif"), read_image(tmp_path / "in.tif")
    assert spec.channels == image.channels == list("RGBA")
    assert spec.meta.pixel_types == image.meta.pixel_types
    assert (spec.width, spec.height) == (image.width, image.height)


# --- JPEG --------------------------------------------------------------------------------------------


def test_jpeg_reads_back_close(tmp_path: Path):
    want = smooth_rgb(64, 96, seed=15)
    iio.imwrite(tmp_path / "in.jpg", want, quality=98)
    image = read_image(tmp_path / "in.jpg")
    assert image.channels == list("RGB") and image.meta.pixel_types == dict.fromkeys("RGB", "uint8")
    write_image(image, tmp_path / "out.jpg")
    got = iio.imread(tmp_path / "out.jpg").astype(np.float64)
    assert np.abs(got - want).mean() < 2.5
    assert np.abs(got - want).max() < 40


def test_jpeg_drops_alpha_and_keeps_gray(tmp_path: Path):
    rgba = np.concatenate([smooth_rgb(32, 48, seed=16), np.full((32, 48, 1), 200, np.uint8)], axis=-1)
    PIL.Image.fromarray(rgba, "RGBA").save(tmp_path / "in.png")
    write_image(read_image(tmp_path / "in.png"), tmp_path / "out.jpg")
    assert read_image(tmp_path / "out.jpg").channels == list("RGB")
    PIL.Image.fromarray(rgba[..., 0], "L").save(tmp_path / "gray.jpg", quality=95)
    gray = read_image(tmp_path / "gray.jpg")
    assert gray.channels == ["Y"] and read_spec(tmp_path / "gray.jpg").channels == ["Y"]


def test_exr_to_float_tiff_is_bit_exact_with_deflate_and_a_predictor(tmp_path: Path):
    want = planes("RGBA", SHAPE, "float", seed=17)
    image = read_image(write_exr(tmp_path / "in.exr", want))
    write_image(image, tmp_path / "out.tif")
    with tifffile.TiffFile(tmp_path / "out.tif") as tif:
        page = tif.pages.first
        assert page.compression == tifffile.COMPRESSION.ADOBE_DEFLATE and page.predictor == 3
        assert page.extrasamples == (tifffile.EXTRASAMPLE.ASSOCALPHA,)  # EXR alpha is premultiplied
        got = page.asarray()
    np.testing.assert_array_equal(bits(got), bits(np.stack([want[c] for c in "RGBA"], axis=-1)))
