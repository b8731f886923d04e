"""Previews of attached files: a small PNG of an image (upright, without the original's
metadata) or of a PDF's first page (pdftoppm), a decompression bomb refused in words
before anything is decoded, and a file that cannot be previewed simply without one."""

from __future__ import annotations

import io
import shutil
from typing import Any

import pytest
from PIL import Image

from approvals.services.attachments import attachment_check
from approvals.services.previews import (
    IMAGE_BOMB,
    IMAGE_TOO_LARGE,
    PREVIEW_BOX,
    image_too_large,
    preview_make,
)

from ..files import (
    BLUE,
    RED,
    bomb_png,
    heic_with_exif,
    jpeg_with_exif,
    pdf_bytes,
    png_bytes,
    upload,
)


def _opened(png: bytes | None) -> Image.Image:
    assert png is not None
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    assert max(image.size) <= max(PREVIEW_BOX)
    return image


def test_a_png_preview_is_small_and_keeps_none_of_the_files_text() -> None:
    png = preview_make(upload=upload("a.png", png_bytes((800, 600))), content_type="image/png")

    image = _opened(png)

    assert image.size == (320, 240)
    assert "Author" not in image.info
    assert image.convert("RGB").getpixel((160, 120)) == RED
    assert png is not None and b"Secret Lane" not in png


def test_a_jpeg_preview_is_turned_upright_and_drops_its_exif() -> None:
    jpeg = jpeg_with_exif((640, 480))

    png = preview_make(upload=upload("photo.jpg", jpeg), content_type="image/jpeg")

    image = _opened(png)
    assert image.size == (240, 320)  # orientation 6: the landscape shot stands up
    assert not image.getexif()
    assert "exif" not in image.info
    assert png is not None and b"Alice Example" not in png


def test_a_heic_photo_is_accepted_by_its_content_and_previewed_upright_without_exif() -> None:
    heic = heic_with_exif((640, 480))  # the top half red: on its side, the right half

    checked = attachment_check(upload("IMG_0042.jpg", heic))  # the name says JPEG
    png = preview_make(upload=upload("IMG_0042.HEIC", heic), content_type="image/heic")

    assert checked.content_type == "image/heic"
    image = _opened(png)
    assert image.size == (240, 320)  # the phone was turned: the preview stands up
    rgb = image.convert("RGB")
    assert _near(rgb.getpixel((200, 160)), RED) and _near(rgb.getpixel((40, 160)), BLUE)
    assert not image.getexif() and "exif" not in image.info
    assert png is not None and b"Alice Example" not in png


def test_a_heic_photo_over_the_pixel_limit_is_refused_before_it_is_decoded(
    settings: Any,
) -> None:
    settings.APPROVALS_IMAGE_MAX_PIXELS = 200_000

    why = image_too_large(io.BytesIO(heic_with_exif((640, 480))))

    assert why == IMAGE_TOO_LARGE.format(width=480, height=640, limit="0.2")


def _near(pixel: Any, colour: tuple[int, int, int]) -> bool:
    """A lossy codec's pixel close to ``colour``."""
    return all(abs(a - b) < 40 for a, b in zip(pixel, colour, strict=True))


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="poppler-utils is not installed")
def test_a_pdf_preview_is_its_first_page() -> None:
    png = preview_make(
        upload=upload("quote.pdf", pdf_bytes(pages=2)), content_type="application/pdf"
    )

    image = _opened(png).convert("RGB")

    assert image.size[1] == 320  # a portrait page, scaled to the box's height
    pixel = image.getpixel((image.size[0] // 2, image.size[1] // 2))
    assert isinstance(pixel, tuple)
    r, g, b = pixel
    assert r > 150 and g < 80 and b < 80  # the red first page, not the blue second


def test_a_file_that_cannot_be_drawn_has_no_preview_and_raises_nothing() -> None:
    broken_pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"
    broken_png = png_bytes()[:60]

    assert preview_make(upload=upload("x.pdf", broken_pdf), content_type="application/pdf") is None
    assert preview_make(upload=upload("x.png", broken_png), content_type="image/png") is None
    assert preview_make(upload=upload("x.heic", b"...."), content_type="image/heic") is None


def test_a_decompression_bomb_is_refused_in_words_before_decoding(settings: Any) -> None:
    settings.APPROVALS_IMAGE_MAX_PIXELS = 40_000_000

    why = image_too_large(io.BytesIO(bomb_png(100_000, 100_000)))

    assert why == IMAGE_BOMB.format(limit="40")


def test_an_image_past_the_pixel_ceiling_is_refused_with_its_size(settings: Any) -> None:
    settings.APPROVALS_IMAGE_MAX_PIXELS = 100_000

    why = image_too_large(io.BytesIO(bomb_png(400, 300)))  # 120,000 pixels

    assert why == IMAGE_TOO_LARGE.format(width=400, height=300, limit="0.1")
    assert "400 × 300 pixels" in why
    assert image_too_large(io.BytesIO(png_bytes((300, 300)))) is None


def test_the_preview_of_a_bomb_is_never_attempted(settings: Any) -> None:
    settings.APPROVALS_IMAGE_MAX_PIXELS = 40_000_000

    assert preview_make(upload=upload("bomb.png", bomb_png()), content_type="image/png") is None
