"""Files made for the attachment tests: real images and a real PDF (drawn with Pillow),
images carrying metadata (a JPEG and a HEIC photo, encoded here by pillow-heif), and a
decompression bomb (a PNG whose header announces ten billion pixels, in a few dozen
bytes); and the helpers the attachment tests share: a fresh storage folder, uploads,
and the forms and API calls that attach them."""

from __future__ import annotations

import io
import struct
import uuid
import zlib
from pathlib import Path
from typing import Any

import pillow_heif
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image
from PIL.PngImagePlugin import PngInfo

RED = (200, 30, 30)
BLUE = (30, 30, 200)
# A tiny PDF by hand (no page to draw), and HTML that a file named ".pdf" may hold.
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"
HTML = b"<!doctype html><html><body><script>alert(document.cookie)</script></body></html>"


@pytest.fixture
def files_root(settings: Any, tmp_path: Path) -> Path:
    """The attachments storage in a fresh folder for the test."""
    root = tmp_path / "files"
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(root)},
        },
    }
    return root


def stored_files(root: Path) -> list[Path]:
    """Every file kept under the storage folder ``root`` (requests', drafts', previews)."""
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def upload(name: str, content: bytes, content_type: str | None = None) -> SimpleUploadedFile:
    """A file as a form or an API call sends it (the type it claims is ignored here)."""
    if content_type is None:
        return SimpleUploadedFile(name, content)
    return SimpleUploadedFile(name, content, content_type=content_type)


def page_attach(client: Any, wid: str, *files: SimpleUploadedFile, request_id: str = "") -> Any:
    """The request page's "Attach files" form, posted with ``files``."""
    return client.post(
        f"/workflows/{wid}/files",
        {"file": list(files), "request_id": request_id or uuid.uuid4().hex},
    )


def api_attach(client: Any, wid: str, content: bytes, name: str, request_id: str) -> Any:
    """``POST /api/workflows/<id>/attachments`` with one file, as multipart."""
    return client.post(
        f"/api/workflows/{wid}/attachments",
        {"file": upload(name, content, "application/pdf"), "requestId": request_id},
        format="multipart",
    )


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


def black_png(width: int, height: int) -> bytes:
    """A real black RGB PNG of ``width`` × ``height``, written a row at a time, so that
    its pixels are never held here (the file is small; decoded, it is width × height × 3
    bytes)."""
    pack = zlib.compressobj(9)
    row = b"\x00" * (1 + 3 * width)  # filter byte "none", then the row's pixels
    data = b"".join(pack.compress(row) for _ in range(height)) + pack.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", data)
        + _chunk(b"IEND", b"")
    )


def heic_with_exif(size: tuple[int, int] = (640, 480)) -> bytes:
    """A HEIC photo as a phone saves one: its EXIF names its author and says "rotate
    90°" (orientation 6), which the encoder keeps as the container's rotation; the top
    half red, the bottom half blue, so that the way up can be told."""
    width, height = size
    image = Image.new("RGB", size, BLUE)
    image.paste(Image.new("RGB", (width, height // 2), RED), (0, 0))
    exif = Image.Exif()
    exif[0x013B] = "Alice Example"  # Artist
    exif[0x0112] = 6  # Orientation: the phone was turned
    heif = pillow_heif.from_pillow(image)
    out = io.BytesIO()
    heif.save(out, quality=60, exif=exif.tobytes())
    return out.getvalue()
