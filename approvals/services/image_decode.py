"""An image's preview decoded in a process of its own, under limits.

``services.previews`` runs this file as a script for every image preview (a photo, a
HEIC, the page pdftoppm drew):

    python -I image_decode.py PATH MAX_PIXELS MEMORY_BYTES CPU_SECONDS

It caps itself before it opens the file: the address space may grow by MEMORY_BYTES
past what the interpreter and the decoders took to load (RLIMIT_AS), and the process
may spend CPU_SECONDS of CPU (RLIMIT_CPU; the parent also stops waiting after its
timeout). It then decodes the image (refusing more than MAX_PIXELS, as the upload
check did), writes the preview PNG on stdout and exits 0; anything else exits non-zero
with the reason on stderr. A decode that runs out of memory or time fails here, never
in the web process, which only ever holds the small PNG.

The module imports nothing of Django or of the app, so that it starts quickly and the
web process's state is not in the child; ``previews`` imports its helpers too (the one
set of decoding rules for the upload's header check and the child's decode)."""

from __future__ import annotations

import contextlib
import io
import resource
import sys
import warnings
from collections.abc import Iterator

import pillow_heif
from PIL import Image, ImageOps

PREVIEW_BOX = (320, 320)

# HEIC photos open in Pillow as any image: the pixel ceiling applies to them, the
# container's rotation is applied as they are decoded (their EXIF orientation is then
# "upright"), and what a preview never uses is not decoded (thumbnails, depth maps,
# auxiliary images), in one thread. libheif's own limits stay on.
pillow_heif.register_heif_opener(
    thumbnails=False, depth_images=False, aux_images=False, decode_threads=1
)

EXIT_FAILED = 2
EXIT_OUT_OF_MEMORY = 3


@contextlib.contextmanager
def bounded(limit: int, *, strict: bool = True) -> Iterator[None]:
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


def clean_png(image: Image.Image) -> bytes:
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


def decode_preview(path: str, max_pixels: int) -> bytes:
    """The preview PNG of the image at ``path``."""
    with bounded(max_pixels), Image.open(path) as image:
        image.draft("RGB", PREVIEW_BOX)  # JPEG: decode at 1/2..1/8 scale straight away
        image.load()
        return clean_png(image)


def _address_space() -> int:
    """This process's address space now (Linux); 0 where it cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def cap(memory_bytes: int, cpu_seconds: int) -> None:
    """Limit this process: ``memory_bytes`` more address space (the hard limit too, so
    nothing in the decoders can raise it again) and ``cpu_seconds`` of CPU, past which
    the kernel ends the process (SIGXCPU)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space() + memory_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    seconds = max(1, cpu_seconds)
    if hard != resource.RLIM_INFINITY:
        seconds = min(seconds, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, hard))


def main(argv: list[str]) -> int:
    try:
        path, max_pixels, memory_bytes, cpu_seconds = argv[1], *map(int, argv[2:5])
    except (ValueError, IndexError):
        print("usage: image_decode.py PATH MAX_PIXELS MEMORY_BYTES CPU_SECONDS", file=sys.stderr)
        return EXIT_FAILED
    cap(memory_bytes, cpu_seconds)
    try:
        png = decode_preview(path, max_pixels)
    except MemoryError:
        print(f"out of memory: the decode needed more than {memory_bytes} bytes", file=sys.stderr)
        return EXIT_OUT_OF_MEMORY
    except Exception as exc:  # the reason goes to the parent's log
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    sys.stdout.buffer.write(png)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
