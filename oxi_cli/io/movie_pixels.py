"""A review frame's R'G'B' (display code values, float) as the codec's Y'CbCr planes: the matrix and range the
movie's tags say, chroma filtered to the codec's subsampling, TPDF-dithered to its depth; and burn-ins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from oxi_cli.io.movie import Burn, Codec, Display

class Converter:
    """Turns frames of one size into the codec's planes; keeps the dither noise, made once per movie."""

    def __init__(self, codec: Codec, display: Display, width: int, height: int) -> None:
        import numpy as np

        self.codec, self.display = codec, display
        self.width, self.height = width, height
        self.dtype = np.uint8 if codec.depth <= 8 else np.uint16
        scale = float(1 << (codec.depth - 8))
        self.luma = (16.0 * scale, 219.0 * scale)  # offset and span of limited-range Y'
        self.chroma = (128.0 * scale, 224.0 * scale)
        self.top = float((1 << codec.depth) - 1)
        kr, kb = display.kr, display.kb
        self.weights = np.array([kr, 1.0 - kr - kb, kb], dtype=np.float32)
        self.cb = np.array([-kr, -(1.0 - kr - kb), 1.0 - kb], dtype=np.float32) / np.float32(2.0 * (1.0 - kb))
        self.cr = np.array([1.0 - kr, -(1.0 - kr - kb), -kb], dtype=np.float32) / np.float32(2.0 * (1.0 - kr))
        sx, sy = codec.chroma
        self.chroma_size = (-(-height // sy), -(-width // sx))
        # Triangular (TPDF) noise of +-1 code value, larger than a frame so each frame takes another window of it.
        rng = np.random.default_rng(20261207)
        pad = 61
        self._noise = (rng.random((height + pad, width + pad), dtype=np.float32)
                       - rng.random((height + pad, width + pad), dtype=np.float32))
        self._pad = pad

    def planes(self, rgb: np.ndarray, alpha: np.ndarray | None, index: int) -> list[np.ndarray]:
        """Y', Cb, Cr (and alpha) planes of an (H, W, 3) float32 R'G'B' frame in 0..1, for frame `index`."""
        import numpy as np

        rgb = np.fmin(np.fmax(rgb, np.float32(0.0)), np.float32(1.0))  # NaN (fmax drops it) and below 0 to 0
        y = rgb @ self.weights
        sub = _subsample(rgb, self.codec.chroma)
        cb, cr = sub @ self.cb, sub @ self.cr
        out = [self._code(y, *self.luma, index, 0), self._code(cb, *self.chroma, index, 1),
               self._code(cr, *self.chroma, index, 2)]
        if self.codec.alpha:
            a = np.ones_like(y) if alpha is None else np.fmin(np.fmax(alpha, np.float32(0.0)), np.float32(1.0))
            out.append(self._code(a, 0.0, self.top, index, 3))  # alpha is full range
        return out

    def _code(self, values: np.ndarray, offset: float, span: float, index: int, plane: int) -> np.ndarray:
        import numpy as np

        h, w = values.shape
        dy = (index * 17 + plane * 29) % self._pad
        dx = (index * 31 + plane * 13) % self._pad
        coded = values * np.float32(span)
        coded += np.float32(offset + 0.5)
        coded += self._noise[dy:dy + h, dx:dx + w]
        np.clip(coded, 0.0, self.top, out=coded)
        return np.floor(coded).astype(self.dtype)


def _subsample(rgb: np.ndarray, chroma: tuple[int, int]) -> np.ndarray:
    """R'G'B' filtered and decimated to the chroma grid (Y'CbCr is linear in R'G'B', so filtering either is the
    same): horizontally [1 2 1]/4 centred on the even columns (co-sited, 'left', as MPEG-2 onwards and
    ProRes place chroma); vertically, for 4:2:0, the mean of each pair of rows (chroma between them)."""
    import numpy as np

    sx, sy = chroma
    if sx == 2:
        n = -(-rgb.shape[1] // 2)
        padded = np.concatenate([rgb[:, :1], rgb, rgb[:, -1:]], axis=1)  # edges repeated
        left, mid, right = padded[:, 0:2 * n:2], padded[:, 1:2 * n + 1:2], padded[:, 2:2 * n + 2:2]
        rgb = (left + right) * np.float32(0.25) + mid * np.float32(0.5)
    if sy == 2:
        if rgb.shape[0] % 2:
            rgb = np.concatenate([rgb, rgb[-1:]], axis=0)
        rgb = (rgb[0::2] + rgb[1::2]) * np.float32(0.5)
    return rgb


def even_size(codec: Codec, width: int, height: int) -> tuple[int, int]:
    """The size the codec takes for a width x height picture: 4:2:0 and 4:2:2 need even sizes (the codec's
    chroma sites); an odd one is padded by one row or column repeating the edge."""
    sx, sy = codec.chroma
    return width + (width % sx), height + (height % sy)


def pad_to(rgb: np.ndarray, width: int, height: int) -> np.ndarray:
    import numpy as np

    h, w = rgb.shape[:2]
    if (w, h) == (width, height):
        return rgb
    return np.pad(rgb, ((0, height - h), (0, width - w), (0, 0)), mode="edge")


def draw_burns(rgb: np.ndarray, burns: tuple[Burn, ...], fields: dict[str, Any], white: float) -> None:
    """Draw each burn-in into the frame, in its display encoding: text at the display's reference white over a
    half-dark box, with Pillow's bundled font sized to the picture (1/28 of its height)."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    h, w = rgb.shape[:2]
    size = max(8, h // 28)
    font = ImageFont.load_default(size=size)
    margin = max(2, size // 2)
    for burn in burns:
        text = burn.text.format(**fields)
        if not text.strip():
            continue
        left, top, right, bottom = font.getbbox(text)
        tw, th = right - left + margin, bottom - top + margin
        mask = Image.new("L", (tw, th), 0)
        ImageDraw.Draw(mask).text((margin // 2 - left, margin // 2 - top), text, fill=255, font=font)
        x, y = _place(burn.place, w, h, tw, th, margin)
        x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + tw, w), min(y + th, h)
        if x1 <= x0 or y1 <= y0:
            continue
        cover = np.asarray(mask, dtype=np.float32)[y0 - y:y1 - y, x0 - x:x1 - x, None] / np.float32(255.0)
        region = rgb[y0:y1, x0:x1]
        region *= np.float32(0.5)  # the box: the picture at half its code value, so text reads on any frame
        region += (np.float32(white) - region) * cover


def _place(place: str, w: int, h: int, tw: int, th: int, margin: int) -> tuple[int, int]:
    vertical, _, horizontal = place.partition("-") if "-" in place else (place, "", "")
    y = margin if vertical == "top" else h - th - margin
    x = {"left": margin, "right": w - tw - margin}.get(horizontal, (w - tw) // 2)
    return x, y
