"""Previews of attached files: a small PNG of an image (upright, without the original's
metadata) or of a PDF's first page (pdftoppm), a decompression bomb refused in words
before anything is decoded, and a file that cannot be previewed simply without one."""

from __future__ import annotations

import hashlib
import io
import logging
import resource
import shutil
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from approvals.models import WorkflowEvent
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
    black_png,
    bomb_png,
    heic_with_exif,
    jpeg_with_exif,
    page_attach,
    pdf_bytes,
    png_bytes,
    stored_files,
    upload,
)
from ..pages.support import expense_started, signed_in


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


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux /proc needed")
def test_an_image_is_decoded_in_a_child_process_not_in_the_web_process() -> None:
    big = black_png(6000, 6000)  # 108 MB of pixels decoded, some 100 KB on disk
    decoded_kb = 6000 * 6000 * 3 // 1024
    Path("/proc/self/clear_refs").write_text("5")  # this process's peak RSS, from now
    before = _status_kb("VmRSS")

    png = preview_make(upload=upload("big.png", big), content_type="image/png")

    assert _opened(png).size == (320, 320)
    # the pixels were held by a child: its peak took them, this process's did not move
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >= decoded_kb
    assert _status_kb("VmHWM") - before < decoded_kb // 4


def test_a_heic_whose_decode_passes_the_memory_cap_has_no_preview_and_is_logged(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    heic = heic_with_exif((640, 480))
    assert preview_make(upload=upload("a.heic", heic), content_type="image/heic") is not None
    settings.APPROVALS_PREVIEW_MEMORY_BYTES = 2 * 1024 * 1024  # far less than libheif needs

    with caplog.at_level(logging.WARNING, logger="approvals.services.previews"):
        png = preview_make(upload=upload("a.heic", heic), content_type="image/heic")

    assert png is None
    assert "no preview for a image/heic file" in caplog.text


def test_a_decode_past_the_time_limit_has_no_preview(settings: Any) -> None:
    settings.APPROVALS_PREVIEW_TIMEOUT_SECONDS = 0  # the child is given no time at all

    png = preview_make(upload=upload("a.png", png_bytes((800, 600))), content_type="image/png")

    assert png is None


@pytest.mark.django_db
def test_a_heic_past_the_memory_cap_is_still_attached_without_a_preview(
    acme: Any, files_root: Path, settings: Any
) -> None:
    settings.APPROVALS_PREVIEW_MEMORY_BYTES = 2 * 1024 * 1024
    heic = heic_with_exif((640, 480))
    sha = hashlib.sha256(heic).hexdigest()
    wid = expense_started("E-heic-cap")

    posted = page_attach(signed_in("alice"), wid, upload("IMG_0042.HEIC", heic))

    assert posted.status_code == 302
    assert WorkflowEvent.objects.filter(
        workflow_id=wid, type="FileAttached", payload__sha256=sha
    ).exists()
    assert sorted(str(p.relative_to(files_root)) for p in stored_files(files_root)) == [
        f"{sha[:2]}/{sha}"
    ]  # the file, and no preview beside it
    bob = signed_in("bob")
    got = bob.get(f"/workflows/{wid}/files/{sha}")
    assert got.status_code == 200 and got.getvalue() == heic
    assert bob.get(f"/workflows/{wid}/files/{sha}/preview").status_code == 404
