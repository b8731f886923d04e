"""A 10 MB attachment streams through the server without being held in memory.

    .venv/bin/python bench/upload_rss.py [--repeat 3]

gunicorn runs the app with one sync worker. Each upload is a real multipart POST to
``/api/workflows/{id}/attachments`` (the view the pages' form shares its handler
with), sent in 64 KiB pieces over a plain socket. Before each upload the worker's peak
resident size (VmHWM) is reset through ``/proc/<pid>/clear_refs``; after it, the peak
less the resident size before is how much the upload grew the process. One small
upload first loads what the view imports (Pillow, filetype, the storage) so the figure
is the upload's, not the imports'. Files are distinct each time, so each is stored.

Rows: a 10 MB PDF (stored; its preview is drawn by pdftoppm in another process), and a
10 MB JPEG photo (stored; its preview decoded by Pillow in the worker at 1/8 scale).
"""

from __future__ import annotations

import argparse
import http.client
import io
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Report, api_token, gunicorn, seed, setup_django, verdict  # noqa: E402

SIZE = 10_000_000
CHUNK = 64 * 1024
TARGET_MIB = 20.0


def _status(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(key)


def _reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS


def pdf_of(size: int) -> bytes:
    """A file that starts like a PDF and is ``size`` bytes of noise after it."""
    head = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
    return head + os.urandom(size - len(head) - 6) + b"\n%%EOF"


def jpeg_of(size: int) -> bytes:
    """A JPEG photo of noise, padded after its end marker to ``size`` bytes (decoders
    stop at the marker; the file is the size a phone's photo would be)."""
    from PIL import Image

    image = Image.frombytes("RGB", (2400, 1800), os.urandom(2400 * 1800 * 3))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=92)
    data = out.getvalue()[:SIZE]
    return data + os.urandom(size - len(data))


def _parts(boundary: str, name: str, content: bytes, request_id: str) -> Iterator[bytes]:
    yield (
        f'--{boundary}\r\nContent-Disposition: form-data; name="requestId"\r\n\r\n'
        f"{request_id}\r\n"
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    view = memoryview(content)
    for i in range(0, len(content), CHUNK):
        yield bytes(view[i : i + CHUNK])
    yield f"\r\n--{boundary}--\r\n".encode()


def upload(port: int, token: str, wid: str, name: str, content: bytes) -> tuple[int, float]:
    boundary = uuid.uuid4().hex
    rid = f"bench-{uuid.uuid4().hex}"
    length = sum(len(p) for p in _parts(boundary, name, b"", rid)) + len(content)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    started = time.perf_counter()
    conn.putrequest("POST", f"/api/workflows/{wid}/attachments")
    conn.putheader("Authorization", f"Bearer {token}")
    conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
    conn.putheader("Content-Length", str(length))
    conn.endheaders()
    for piece in _parts(boundary, name, content, rid):
        conn.send(piece)
    answer = conn.getresponse()
    answer.read()
    conn.close()
    return answer.status, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    files = tempfile.mkdtemp(prefix="approvals-bench-files-")
    os.environ["APPROVALS_FILES_ROOT"] = files  # the server keeps its files here
    setup_django()
    from approvals.services.workflows import workflow_start

    people = seed()
    alice = people["alice"]
    token = api_token(alice)
    wid = str(
        workflow_start(
            submitter=alice,
            template_key="expense-approval",
            subject_type="expense",
            subject_id=f"bench-upload-{uuid.uuid4().hex[:8]}",
            data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
        ).workflow_id
    )
    report = Report("upload_rss", "Attachment upload: peak memory of a 10 MB file")
    rows = []
    with gunicorn(workers=1) as server:
        (pid,) = server.worker_pids()
        status, _ = upload(server.port, token, wid, "warm.pdf", pdf_of(50_000))
        assert status == 200, status
        kinds = [("10 MB PDF", "receipt.pdf", lambda: pdf_of(SIZE))]
        kinds.append(("10 MB JPEG photo", "photo.jpg", lambda: jpeg_of(SIZE)))
        for label, name, make in kinds:
            growths, seconds, statuses = [], [], []
            for _ in range(args.repeat):
                content = make()
                before = _status(pid, "VmRSS")
                _reset_peak(pid)
                status, took = upload(server.port, token, wid, name, content)
                statuses.append(status)
                growths.append(_status(pid, "VmHWM") - before)
                seconds.append(took)
            worst = max(growths)
            rows.append(
                [
                    label,
                    args.repeat,
                    ",".join(str(s) for s in sorted(set(statuses))),
                    worst,
                    sum(growths) / len(growths),
                    sum(seconds) / len(seconds) * 1000,
                    f"<= {TARGET_MIB:.0f} MiB",
                    verdict(worst <= TARGET_MIB and set(statuses) == {200}),
                ]
            )
        rss_after = _status(pid, "VmRSS")
    report.table(
        "POST /api/workflows/{id}/attachments under gunicorn (1 sync worker): the worker's "
        "peak resident growth over one upload",
        [
            "upload",
            "uploads",
            "HTTP",
            "peak growth MiB (max)",
            "mean MiB",
            "mean ms",
            "target",
            "result",
        ],
        rows,
    )
    report.note(
        f"the worker's resident size after all uploads: {rss_after:.0f} MiB; each file "
        "streamed to a temporary file in 64 KiB chunks, was hashed and sniffed from disk, "
        "and stored under its SHA-256 on the local disk storage"
    )
    report.write()
    shutil.rmtree(files, ignore_errors=True)


if __name__ == "__main__":
    main()
