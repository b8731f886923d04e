"""Previews of attached files: a small PNG of an image or of a PDF's first page, made
once when the file is first stored and kept beside it under a derived name.

Images are decoded by Pillow (HEIC photos through pillow-heif's plugin, which brings its
own libheif and HEVC decoder in its wheel) with a pixel ceiling (a file whose header announces more
pixels is refused before anything is decoded: see ``image_too_large``), shrunk while
decoding where the format allows, turned upright and saved without any of the
original's metadata (no EXIF, GPS, ICC or text chunks). The decoding runs in a child
process (``image_decode``, no shell) capped in address space
(APPROVALS_PREVIEW_MEMORY_BYTES), CPU and wall time (APPROVALS_PREVIEW_TIMEOUT_SECONDS),
so a file whose decode would take gigabytes costs the web process nothing. A PDF's first
page is drawn by Debian's ``pdftoppm`` in a subprocess under the same kind of limits at a
low resolution, and that page is then decoded as an image. A preview that cannot be made
(a broken file, a decode past the limits) is simply absent and logged: it never fails
the upload.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from PIL import Image, UnidentifiedImageError

from ..selectors.attachments import STORAGE_ALIAS, preview_name
from . import image_decode
from .image_decode import PREVIEW_BOX as PREVIEW_BOX  # the box, said once
from .image_decode import bounded

log = logging.getLogger(__name__)

PDF_DPI = "36"
PDF_MEMORY_BYTES = 512 * 1024 * 1024
IMAGE_TYPES = {"image/png", "image/jpeg", "image/webp", "image/heic"}
# The image decoder, run as a script by the interpreter running the app.
DECODER = str(Path(image_decode.__file__).resolve())

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
        with bounded(limit, strict=False), Image.open(stream) as image:
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


class PreviewFailed(Exception):
    """The decoder could not make the preview: a broken file, or past its limits."""


def _image_preview(path: str) -> bytes:
    """The preview of the image at ``path``, decoded by ``image_decode`` in a child
    process under the limits; raises PreviewFailed or subprocess.TimeoutExpired (the
    child is killed then)."""
    timeout = settings.APPROVALS_PREVIEW_TIMEOUT_SECONDS
    done = subprocess.run(  # noqa: S603  (this interpreter, a fixed script, no shell)
        [
            sys.executable,
            "-I",  # no environment variables, user site or working folder on the path
            DECODER,
            path,
            str(settings.APPROVALS_IMAGE_MAX_PIXELS),
            str(settings.APPROVALS_PREVIEW_MEMORY_BYTES),
            str(timeout),
        ],
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip()[-500:]
        if done.returncode < 0:
            why = f"killed by signal {-done.returncode} (a limit) {why}".strip()
        raise PreviewFailed(why or f"the decoder exited with {done.returncode}")
    return done.stdout


def _pdf_preview(path: str) -> bytes:
    pdftoppm = shutil.which("pdftoppm")
    if pdftoppm is None:
        raise FileNotFoundError("pdftoppm is not installed")
    # A hostile PDF may ask for a huge page: util-linux's prlimit caps the drawing's
    # address space where it is installed (the timeout bounds the time either way).
    prlimit = shutil.which("prlimit")
    timeout = settings.APPROVALS_PREVIEW_TIMEOUT_SECONDS
    capped = [prlimit, f"--as={PDF_MEMORY_BYTES}", f"--cpu={timeout}", "--"] if prlimit else []
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
            timeout=timeout,
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
