"""Where workflow templates may send requests: each organisation's list of outbound hosts,
and connections made only to addresses that were checked.

``Tenant.outbound_hosts`` holds one host per line, set by an organisation admin::

    erp.example.com
    budget.acme.internal private

A host not on the list is refused. Whatever the list says, a name is resolved once,
every address it resolves to is checked, and the connection goes to a checked address
(no second lookup that a changed DNS answer could turn to another address). Loopback
and private addresses are refused unless the host's line ends in ``private``;
link-local (cloud metadata), multicast, unspecified and reserved addresses always are.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .registry import NonRetryableError

PRIVATE_FLAG = "private"
# A DNS name (letters, digits, dashes, dots) or an IP address; no scheme, port or path.
_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9](?:[a-z0-9-]{0,62}))*\.?")

ENTRY_INVALID = (
    "Line {line} ({text!r}) is not a host: write one host name or IP address per line,"
    " optionally followed by the word 'private'."
)
HOST_NOT_ALLOWED = (
    "{host} is not on this organisation's list of hosts workflow templates may call;"
    " an organisation admin can add it."
)
ADDRESS_REFUSED = (
    "{host} resolves to {address}, a {kind} address, which workflow templates may not call."
)
PRIVATE_REFUSED = (
    "{host} resolves to {address}, a {kind} address; an organisation admin may allow private"
    " addresses for this host by adding the word 'private' to its line."
)
NOT_HTTP = "{url} is not an http or https address."
NOT_FOUND = "{host} could not be found."


class OutboundRefused(NonRetryableError):
    """A call the organisation's rules refuse: asking again will not help."""


@dataclass(frozen=True)
class AllowedHost:
    host: str
    private: bool = False


def normal_host(host: str) -> str:
    """A host as the list and URLs compare it: lower case, no trailing dot, no brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


def allow_list(text: str | None) -> dict[str, AllowedHost]:
    """The hosts of an organisation's list, by name. Raises ValueError (ENTRY_INVALID)
    for a line that is not a host."""
    hosts: dict[str, AllowedHost] = {}
    for number, raw in enumerate((text or "").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        private = len(words) == 2 and words[1].lower() == PRIVATE_FLAG
        host = normal_host(words[0])
        if len(words) > 2 or (len(words) == 2 and not private) or not _is_host(host):
            raise ValueError(ENTRY_INVALID.format(line=number, text=raw.strip()))
        hosts[host] = AllowedHost(host, private)
    return hosts


def _is_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return len(host) <= 253 and _NAME.fullmatch(host) is not None


def url_host(url: object) -> str | None:
    """The host an http(s) URL names, normalised; None when it is not one."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a port that is not a number)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return normal_host(parts.hostname)


def address_kind(address: str) -> str | None:
    """What makes ``address`` one templates may not call by default ("loopback",
    "private", "link-local", ...), or None for a public address. An IPv6 address that
    carries an IPv4 one (``::ffff:127.0.0.1``, 6to4, Teredo) is judged by that one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is not None:
            return address_kind(str(inner)) or (None if ip.is_global else "reserved")
        if ip in _NAT64 and (
            kind := address_kind(str(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
        ):
            return kind
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private or ip in _SHARED:
        return "private"
    if not ip.is_global:
        return "reserved"
    return None


_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not the internet
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# What a host's "private" word allows; the rest is never called.
_PRIVATE_KINDS = frozenset({"loopback", "private"})


def address_refusal(host: str, address: str, allowed: AllowedHost) -> str | None:
    """Why ``address`` (one that ``host`` resolved to) may not be called, or None."""
    kind = address_kind(address)
    if kind is None:
        return None
    if kind in _PRIVATE_KINDS:
        if allowed.private:
            return None
        return PRIVATE_REFUSED.format(host=host, address=address, kind=kind)
    return ADDRESS_REFUSED.format(host=host, address=address, kind=kind)


def checked_address(host: str, port: int, hosts: Mapping[str, AllowedHost]) -> str:
    """Resolve ``host`` once and return an address to connect to; raise OutboundRefused
    when the host is not on the list or any address it resolves to may not be called."""
    allowed = hosts.get(host)
    if allowed is None:
        raise OutboundRefused(HOST_NOT_ALLOWED.format(host=host))
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise OSError(NOT_FOUND.format(host=host)) from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses:
        raise OSError(NOT_FOUND.format(host=host))
    for address in addresses:
        if (refusal := address_refusal(host, address, allowed)) is not None:
            raise OutboundRefused(refusal)
    return addresses[0]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the checked address; the Host header still names the host."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """TLS to the checked address; the certificate is verified against the host name."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def connection(url: str, hosts: Mapping[str, AllowedHost], timeout: float) -> tuple[Any, str]:
    """A connection for ``url`` pinned to a checked address, and the path to ask for.
    Raises OutboundRefused (not http(s), host not allowed, address refused)."""
    host = url_host(url)
    if host is None:
        raise OutboundRefused(NOT_HTTP.format(url=url))
    parts = urlsplit(url)
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    address = checked_address(host, port, hosts)
    kind = _PinnedHTTPSConnection if https else _PinnedHTTPConnection
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return kind(host, port, address, timeout), path
