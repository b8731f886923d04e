"""Files made for the attachment tests: real images and a real PDF (drawn with Pillow),
an image carrying metadata, and a decompression bomb (a PNG whose header announces ten
billion pixels, in a few dozen bytes)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image
from PIL.PngImagePlugin import PngInfo

RED = (200, 30, 30)


def png_bytes(size: tuple[int, int] = (800, 600), colour: tuple[int, int, int] = RED) -> bytes:
    """A PNG with a text chunk (an author's name) that a preview must not keep."""
    info = PngInfo()
    info.add_text("Author", "Alice Example, 12 Secret Lane")
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="PNG", pnginfo=info)
    return out.getvalue()


def jpeg_with_exif(size: tuple[int, int] = (640, 480)) -> bytes:
    """A JPEG whose EXIF names its author and says "rotate 90°" (orientation 6)."""
    image = Image.new("RGB", size, RED)
    exif = Image.Exif()
    exif[0x013B] = "Alice Example"  # Artist
    exif[0x0112] = 6  # Orientation: the camera was turned
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif.tobytes(), quality=80)
    return out.getvalue()


def pdf_bytes(pages: int = 2) -> bytes:
    """A real PDF of ``pages`` A4-ish pages, the first red, the others blue."""
    first = Image.new("RGB", (595, 842), RED)
    rest = [Image.new("RGB", (595, 842), (30, 30, 200)) for _ in range(pages - 1)]
    out = io.BytesIO()
    first.save(out, format="PDF", save_all=True, append_images=rest, resolution=72)
    return out.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def bomb_png(width: int = 100_000, height: int = 100_000) -> bytes:
    """A PNG header announcing ``width`` × ``height`` pixels with hardly any data: a
    decoder that believed it would ask for gigabytes."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + _chunk(b"IEND", b"")
    )
