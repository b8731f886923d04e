"""An outbox mail as the bytes an SMTP server receives, written directly.

Django's ``EmailMultiAlternatives.message()`` builds the mail through Python's ``email``
package (header objects, a generator that folds every header): most of a sender's CPU
per mail. An outbox mail always has the same shape (a plain text body and its HTML
alternative, one recipient, a Subject, From, To, Date and Message-ID), so
``OutboxEmail`` writes that shape as bytes: UTF-8 bodies sent 8bit (quoted-printable
when a line is longer than RFC 5322 allows), a non-ASCII header as RFC 2047 encoded
words. It stays an ``EmailMultiAlternatives``: every mail backend sends it (SMTP with
these bytes; locmem, console and file backends keep or write it as they do any mail).
"""

from __future__ import annotations

import base64
import functools
import quopri
import secrets
from email.utils import formatdate
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.core.mail.message import forbid_multi_line_headers

LINE_LIMIT = 998  # octets per line, RFC 5322
WORD_OCTETS = 45  # of UTF-8 per encoded word: 60 base64 characters, a word of 72
CRLF = b"\r\n"


def encoded_words(text: str) -> str:
    """``text`` as one header value: itself when ASCII, else RFC 2047 ``=?utf-8?b?...?=``
    words folded one per line, each cut between characters."""
    if text.isascii():
        return text
    words: list[str] = []
    chunk = bytearray()
    for char in text:
        octets = char.encode()
        if len(chunk) + len(octets) > WORD_OCTETS:
            words.append(_word(chunk))
            chunk = bytearray()
        chunk += octets
    if chunk:
        words.append(_word(chunk))
    return "\r\n ".join(words)


def _word(octets: bytes | bytearray) -> str:
    return "=?utf-8?b?" + base64.b64encode(octets).decode("ascii") + "?="


@functools.lru_cache(maxsize=64)
def address_header(name: str, value: str) -> str:
    """A From or To header's value as Django writes it (a display name or an address
    that is not ASCII encoded): worked out once per address."""
    return str(forbid_multi_line_headers(name, value, "utf-8")[1])


def _part(content_type: str, body: str) -> bytes:
    lines = body.replace("\r\n", "\n").replace("\r", "\n").encode().split(b"\n")
    if any(len(line) > LINE_LIMIT for line in lines):
        encoded = quopri.encodestring(b"\n".join(lines)).replace(b"\n", CRLF)
        encoding = b"quoted-printable"
    else:
        encoded, encoding = CRLF.join(lines), b"8bit"
    return (
        b'Content-Type: %s; charset="utf-8"\r\nMIME-Version: 1.0\r\n'
        b"Content-Transfer-Encoding: %s\r\n\r\n%s" % (content_type.encode(), encoding, encoded)
    )


def mail_bytes(
    *, subject: str, text: str, html: str, from_email: str, to: str, message_id: str
) -> bytes:
    """The whole mail, CRLF line ends: headers, then the text and HTML alternatives."""
    parts = [_part("text/plain", text), _part("text/html", html)]
    boundary = "===============" + secrets.token_hex(12) + "=="
    while any(boundary.encode() in part for part in parts):  # as good as never
        boundary = "===============" + secrets.token_hex(12) + "=="
    head = (
        f'Content-Type: multipart/alternative;\r\n boundary="{boundary}"\r\n'
        "MIME-Version: 1.0\r\n"
        f"Subject: {encoded_words(subject)}\r\n"
        f"From: {address_header('From', from_email)}\r\n"
        f"To: {address_header('To', to)}\r\n"
        f"Date: {formatdate(localtime=settings.EMAIL_USE_LOCALTIME)}\r\n"
        f"Message-ID: {message_id}\r\n"
    ).encode()
    sep = b"--" + boundary.encode()
    return b"".join(
        [head, CRLF, sep, CRLF, parts[0], CRLF, sep, CRLF, parts[1], CRLF, sep, b"--", CRLF]
    )


class _Written:
    """The part of ``email.message.Message`` the mail backends use."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def as_bytes(self, unixfrom: bool = False, linesep: str = "\n", **_: Any) -> bytes:
        return self.data if linesep == "\r\n" else self.data.replace(CRLF, linesep.encode())

    def as_string(self, unixfrom: bool = False, linesep: str = "\n", **_: Any) -> str:
        return self.as_bytes(linesep=linesep).decode()

    def get_charset(self) -> None:
        return None


class OutboxEmail(EmailMultiAlternatives):
    """One outbox mail: ``body`` and its HTML alternative to one address, with its
    stable Message-ID; ``message()`` writes the bytes once."""

    def __init__(
        self, *, subject: str, text: str, html: str, to: str, message_id: str, connection: Any
    ) -> None:
        super().__init__(
            subject=subject,
            body=text,
            from_email=settings.DEFAULT_FROM_EMAIL,
            to=[to],
            headers={"Message-ID": message_id},
            alternatives=[(html, "text/html")],
            connection=connection,
        )
        self._written: _Written | None = None

    def message(self, *, policy: Any = None) -> Any:
        if self._written is None:
            html = str(self.alternatives[0][0])
            self._written = _Written(
                mail_bytes(
                    subject=str(self.subject),
                    text=str(self.body),
                    html=html,
                    from_email=str(self.from_email),
                    to=self.to[0],
                    message_id=self.extra_headers["Message-ID"],
                )
            )
        return self._written
