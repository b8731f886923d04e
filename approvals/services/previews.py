"""Previews of attached files: a small PNG of an image or of a PDF's first page, made
once when the file is first stored and kept beside it under a derived name.

Images are decoded by Pillow (HEIC photos through pillow-heif's plugin, which brings its
own libheif and HEVC decoder in its wheel) with a pixel ceiling (a file whose header announces more
pixels is refused before anything is decoded: see ``image_too_large``), shrunk while
decoding where the format allows, turned upright and saved without any of the
original's metadata (no EXIF, GPS, ICC or text chunks). A PDF's first page is drawn by
Debian's ``pdftoppm`` in a subprocess (no shell) at a low resolution, under a timeout.
A preview that cannot be made is simply absent: it never fails the upload.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pillow_heif
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from PIL import Image, ImageOps, UnidentifiedImageError

from ..selectors.attachments import STORAGE_ALIAS, preview_name

log = logging.getLogger(__name__)

PREVIEW_BOX = (320, 320)
PDF_DPI = "36"
PDF_MEMORY_BYTES = 512 * 1024 * 1024
IMAGE_TYPES = {"image/png", "image/jpeg", "image/webp", "image/heic"}

# HEIC photos open in Pillow as any image: the pixel ceiling below applies to them, the
# container's rotation is applied as they are decoded (their EXIF orientation is then
# "upright"), and what a preview never uses is not decoded (thumbnails, depth maps,
# auxiliary images), in one thread. libheif's own limits stay on.
pillow_heif.register_heif_opener(
    thumbnails=False, depth_images=False, aux_images=False, decode_threads=1
)

IMAGE_TOO_LARGE = (
    "This image is {width:,} × {height:,} pixels; the largest accepted is {limit} "
    "megapixels. Scale it down or attach it as a PDF."
)
IMAGE_BOMB = (
    "This image says it is larger than {limit} megapixels, too large to open safely. "
    "Scale it down or attach it as a PDF."
)


def _megapixels(limit: int) -> str:
    return f"{limit / 1_000_000:g}"


def image_too_large(stream: IO[bytes]) -> str | None:
    """Why the image in ``stream`` is refused (its header announces more pixels than
    APPROVALS_IMAGE_MAX_PIXELS), or None. Reads the header only, decodes nothing; an
    image Pillow cannot read at all is not refused here (it gets no preview)."""
    limit = settings.APPROVALS_IMAGE_MAX_PIXELS
    stream.seek(0)
    try:
        # Pillow itself refuses past twice the ceiling; up to there the size is read
        # and said in the refusal below.
        with _bounded(limit, strict=False), Image.open(stream) as image:
            width, height = image.size
    except Image.DecompressionBombError:
        return IMAGE_BOMB.format(limit=_megapixels(limit))
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return None
    finally:
        stream.seek(0)
    if width * height > limit:
        return IMAGE_TOO_LARGE.format(width=width, height=height, limit=_megapixels(limit))
    return None


@contextlib.contextmanager
def _bounded(limit: int, *, strict: bool = True) -> Iterator[None]:
    """Pillow refuses more than ``limit`` pixels (``strict``: its warning, given past
    the limit and short of twice it, is made an error too)."""
    before = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = limit
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error" if strict else "ignore", Image.DecompressionBombWarning)
            yield
    finally:
        Image.MAX_IMAGE_PIXELS = before


def _clean_png(image: Image.Image) -> bytes:
    """``image`` shrunk into the preview box, as a PNG holding pixels and nothing else."""
    image = ImageOps.exif_transpose(image) or image
    image.thumbnail(PREVIEW_BOX)
    if image.mode not in {"RGB", "RGBA", "L", "LA"}:
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    clean = Image.new(image.mode, image.size)
    clean.paste(image)  # a new image: no info, EXIF, ICC profile or text from the file
    out = io.BytesIO()
    clean.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _image_preview(path: str) -> bytes:
    with _bounded(settings.APPROVALS_IMAGE_MAX_PIXELS), Image.open(path) as image:
        image.draft("RGB", PREVIEW_BOX)  # JPEG: decode at 1/2..1/8 scale straight away
        image.load()
        return _clean_png(image)


def _pdf_preview(path: str) -> bytes:
    pdftoppm = shutil.which("pdftoppm")
    if pdftoppm is None:
        raise FileNotFoundError("pdftoppm is not installed")
    # A hostile PDF may ask for a huge page: util-linux's prlimit caps the drawing's
    # address space where it is installed (the timeout bounds the time either way).
    prlimit = shutil.which("prlimit")
    capped = [prlimit, f"--as={PDF_MEMORY_BYTES}", "--"] if prlimit else []
    with tempfile.TemporaryDirectory(prefix="approvals-preview-") as folder:
        out = os.path.join(folder, "page")
        subprocess.run(  # noqa: S603  (a fixed program and arguments, no shell)
            [
                *capped,
                pdftoppm,
                "-png",
                "-f",
                "1",
                "-l",
                "1",
                "-r",
                PDF_DPI,
                "-scale-to",
                str(max(PREVIEW_BOX)),
                "-singlefile",
                path,
                out,
            ],
            check=True,
            capture_output=True,
            timeout=settings.APPROVALS_PREVIEW_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
        )
        return _image_preview(out + ".png")


@contextlib.contextmanager
def _on_disk(upload: Any) -> Iterator[str]:
    """A path to the upload's bytes: its temporary file, else a copy in chunks."""
    path = getattr(upload, "temporary_file_path", None)
    if path is not None:
        yield str(path())
        return
    with tempfile.NamedTemporaryFile(prefix="approvals-upload-") as copy:
        upload.seek(0)
        while chunk := upload.read(64 * 1024):
            copy.write(chunk)
        copy.flush()
        upload.seek(0)
        yield copy.name


def preview_make(*, upload: Any, content_type: str) -> bytes | None:
    """The preview PNG of ``upload`` (an image or a PDF), or None when the type has no
    preview or it could not be made (logged, never raised)."""
    if content_type not in IMAGE_TYPES and content_type != "application/pdf":
        return None
    try:
        with _on_disk(upload) as path:
            if content_type == "application/pdf":
                return _pdf_preview(path)
            return _image_preview(path)
    except Exception:  # a preview is a nicety: whatever went wrong, the file stays
        log.warning("no preview for a %s file", content_type, exc_info=True)
        return None


def preview_store(*, sha256: str, upload: Any, content_type: str) -> bool:
    """Make and keep the preview of the file ``sha256`` unless it is kept already;
    says whether the file has one now."""
    storage = storages[STORAGE_ALIAS]
    name = preview_name(sha256)
    if storage.exists(name):
        return True
    png = preview_make(upload=upload, content_type=content_type)
    if png is None:
        return False
    try:
        storage.save(name, ContentFile(png, name=Path(name).name))
    except Exception:
        log.warning("the preview of a file could not be stored", exc_info=True)
        return False
    return True
