"""What ``memex serve`` refuses before a page is built: the Host, method and token rules.

:func:`bind_rule` decides at start whether an address may be served (a
non-loopback address needs a token); :class:`Guard` is the ASGI middleware
that checks every request, in this order:

1. the ``Host`` header must name the address served, a loopback name when
   that address is loopback, or a name given with ``--allow-host``
   (otherwise 400: a page on another site whose name was re-pointed at
   127.0.0.1, DNS rebinding, cannot read the inspector);
2. the method must be ``GET`` or ``HEAD`` (otherwise 405, with ``Allow``);
3. with a token: ``Authorization: Bearer TOKEN``, the cookie a first
   ``?token=TOKEN`` set (HttpOnly, SameSite=Strict), or that query itself,
   answered with a redirect to the same address without it (otherwise 401);
   the package's static files alone (``/static/...``: the stylesheet, the
   script, Cytoscape.js; no data of the memory) need none, so that the 401
   page is styled.

Every answer carries :data:`SECURITY_HEADERS`: a Content-Security-Policy
that allows scripts and styles from the inspector itself only (no inline
script, no ``eval``), no framing, no referrer, no MIME sniffing.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from memex.errors import ValidationError

__all__ = [
    "SECURITY_HEADERS",
    "CYTOSCAPE_STYLE_HASH",
    "TOKEN_COOKIE",
    "TOKEN_ENV",
    "LOOPBACK_NAMES",
    "Guard",
    "PUBLIC_PREFIX",
    "bind_rule",
    "check_token",
    "is_loopback",
    "allowed_host_names",
    "host_name",
    "is_wildcard",
    "machine_addresses",
    "MIN_TOKEN",
]

#: The fewest characters a token may have when the address served is not loopback.
MIN_TOKEN = 16

#: The environment variable ``memex serve`` reads a token from when ``--token`` gives none.
TOKEN_ENV = "MEMEX_SERVE_TOKEN"
#: The cookie a ``?token=`` sets (HttpOnly, SameSite=Strict, path ``/``).
TOKEN_COOKIE = "memex_token"
#: The names a loopback server answers to besides its own address.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
#: The SHA-256 of the one ``<style>`` element Cytoscape.js adds (its container's
#: ``position: relative``), allowed by hash: no other inline style applies.
CYTOSCAPE_STYLE_HASH = b"'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='"
#: The headers of every answer, as ``(name, value)`` byte pairs.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self' "
        + CYTOSCAPE_STYLE_HASH
        + b"; img-src 'self' data:; "
        b"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name to bind) is a loopback address.

    Args:
        host: ``"127.0.0.1"``, ``"::1"``, ``"localhost"``, ``"0.0.0.0"``, a name...
    Returns:
        ``True`` for ``localhost`` and any address in 127.0.0.0/8 or ``::1``;
        ``False`` for every other address or name (a name is not resolved).
    """
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def bind_rule(host: str, token: str | None) -> str | None:
    """Whether ``memex serve`` may serve ``host``: ``None`` when it may, else why not.

    Args:
        host: the address to bind (``--host``).
        token: the token requests must carry, or ``None``.
    Returns:
        ``None`` for a loopback address (any token, or none), or any address
        with a token of at least :data:`MIN_TOKEN` characters; otherwise one
        sentence saying a (longer) token is needed.
    """
    if is_loopback(host):
        return None
    if not token:
        return (
            f"--host {host} is not a loopback address: anyone who can reach it could read the "
            f"memory, so give --token TOKEN (or set {TOKEN_ENV})"
        )
    if len(token) < MIN_TOKEN:
        return (
            f"--host {host} is not a loopback address: its token must have at least "
            f"{MIN_TOKEN} characters (got {len(token)}; --token without a value makes one up)"
        )
    return None


def is_wildcard(host: str) -> bool:
    """Whether ``host`` is an address meaning every interface (``0.0.0.0``, ``::``).

    >>> is_wildcard("0.0.0.0"), is_wildcard("[::]"), is_wildcard("192.168.1.4")
    (True, True, False)
    """
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_unspecified
    except ValueError:
        return False


def machine_addresses(host: str) -> list[str]:
    """This machine's own addresses a server bound to the wildcard ``host`` is reached at.

    Read from the machine's name (``getaddrinfo(gethostname())``) and from the
    address the system would send from (a UDP socket ``connect``: no packet is
    sent), IPv4 for ``0.0.0.0``, both families for ``::``; loopback addresses
    are left out. Addresses, never names: a ``Host`` header holding an address
    cannot come from a DNS-rebinding page (that page's ``Host`` is its name).

    Args:
        host: the address served.
    Returns:
        The addresses, the one the system sends from first; ``[]`` for an
        address that is not a wildcard, or when none is found.
    """
    if not is_wildcard(host):
        return []
    v6 = ":" in host
    families = [socket.AF_INET, socket.AF_INET6] if v6 else [socket.AF_INET]
    found: list[str] = []
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        if family not in families:
            continue
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as udp:
                udp.connect((probe, 9))
                found.append(str(udp.getsockname()[0]))
        except OSError:
            pass
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None)
    except OSError:
        infos = []
    for family, *_, sockaddr in infos:
        if family in families:
            found.append(str(sockaddr[0]))
    out: list[str] = []
    for text in found:
        name = text.partition("%")[0]
        if name not in out and not is_loopback(name) and not is_wildcard(name):
            out.append(name)
    return out


def host_name(header: str) -> str:
    """The name part of a ``Host`` header, lower case, without the port or IPv6 brackets.

    >>> host_name("LocalHost:8765"), host_name("[::1]:8765"), host_name("127.0.0.1")
    ('localhost', '::1', '127.0.0.1')
    """
    text = header.strip().lower()
    if text.startswith("["):
        return text[1:].partition("]")[0]
    if text.count(":") == 1:
        return text.partition(":")[0]
    return text


def allowed_host_names(host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` names a server bound to ``host`` answers to.

    Args:
        host: the address served (``--host``).
        extra: names added with ``--allow-host`` (``"inspector.lan"``; a
            port, if given, is ignored).
    Returns:
        ``host`` itself, :data:`LOOPBACK_NAMES` when ``host`` is loopback,
        for a wildcard ``host`` (``0.0.0.0``, ``::``) the loopback names and
        the machine's own addresses (:func:`machine_addresses`: addresses
        only, so DNS rebinding stays refused; a name clients use, such as the
        machine's DNS name, must be given with ``--allow-host``), and
        ``extra``, each as :func:`host_name` reads a header.
    """
    names = {host_name(host)} | {host_name(name) for name in extra if name.strip()}
    if is_loopback(host) or is_wildcard(host):
        names |= LOOPBACK_NAMES
    names |= {host_name(address) for address in machine_addresses(host)}
    return frozenset(names)


_TOKEN = re.compile(r"[A-Za-z0-9._~+/=!#$%&'*^`|-]+")


def check_token(token: str | None) -> str | None:
    """``token`` if it can travel in a header and a cookie as it is; ``None`` for ``None`` or ``""``.

    Args:
        token: the token requests must carry.
    Returns:
        The token, or ``None`` (no token).
    Raises:
        ValidationError: a token with a character other than letters, digits
            and ``._~+/=!#$%&'*^`|-`` (a space, ``;``, ``,`` or a quote would
            break the cookie or the header), naming ``token``.
    """
    if not token:
        return None
    if not _TOKEN.fullmatch(token):
        raise ValidationError(
            "token: use letters, digits and ._~+/=!#$%&'*^`|- only (no spaces, quotes, ; or ,)",
            "token",
        )
    return token


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _cookie_token(scope: Scope) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # pragma: no cover - load skips what it cannot parse; defensive
        return None
    morsel = jar.get(TOKEN_COOKIE)
    return None if morsel is None else morsel.value


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


#: The one place answered without the token: the package's own files (the stylesheet,
#: the script, Cytoscape.js, the icon), so that the 401 page is styled. No data of the
#: memory is under it.
PUBLIC_PREFIX = "/static/"


def _public(path: str) -> bool:
    """Whether ``path`` is one of the package's static files (under :data:`PUBLIC_PREFIX`,
    no ``..`` segment, no backslash): answered without the token."""
    if not path.startswith(PUBLIC_PREFIX) or "\\" in path:
        return False
    return ".." not in path[len(PUBLIC_PREFIX) :].split("/")


class Guard:
    """ASGI middleware: the Host, method and token rules, and the security headers.

    Args:
        app: the ASGI application it guards.
        allowed_hosts: the ``Host`` names accepted (:func:`allowed_host_names`).
        token: the token requests must carry, or ``None`` for none.
        refuse: ``refuse(status, title, message) -> (body bytes, content type)``,
            the page of a refused request (the inspector's error page).
    Raises:
        ValidationError: a token :func:`check_token` refuses.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: frozenset[str],
        token: str | None,
        refuse: Callable[[int, str, str], tuple[bytes, str]],
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.token = check_token(token)
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a refused request itself; pass any other on with the security headers."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if host is None or host_name(host) not in self.allowed_hosts:
            await self._refused(
                send,
                400,
                "Bad Host header",
                "This inspector answers only to the address it serves "
                "(memex serve --allow-host NAME adds a name).",
            )
            return
        if scope["method"] not in ("GET", "HEAD"):
            await self._refused(
                send,
                405,
                "Method not allowed",
                "The inspector only reads: it answers GET and HEAD.",
                [(b"allow", b"GET, HEAD")],
            )
            return
        if (
            self.token is not None
            and not _public(scope["path"])
            and not await self._authorised(scope, send)
        ):
            return
        await self.app(scope, receive, self._with_headers(send))

    async def _authorised(self, scope: Scope, send: Send) -> bool:
        """Whether the request carries the token; answers it (401 or a redirect) when not."""
        assert self.token is not None
        auth = _header(scope, b"authorization") or ""
        scheme, _, given = auth.partition(" ")
        if scheme.lower() == "bearer" and _same(given.strip(), self.token):
            return True
        if _same(_cookie_token(scope), self.token):
            return True
        query = parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1"))
        offered = [v for k, v in query if k == "token"]
        if offered and _same(offered[-1], self.token):
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            # the path as sent (percent-encoded: no line break can reach the header), on
            # this site ("//other.example" would be another site's address)
            raw = scope.get("raw_path") or scope["path"].encode("utf-8")
            path = "/" + bytes(raw).decode("latin-1").lstrip("/")
            location = path + (f"?{rest}" if rest else "")
            cookie = f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
            await self._send(
                send,
                303,
                b"",
                "text/plain",
                [(b"location", location.encode("latin-1")), (b"set-cookie", cookie.encode())],
            )
            return False
        await self._refused(
            send,
            401,
            "Token needed",
            "This inspector needs its token: open the address memex serve printed "
            "(with ?token=...), or send Authorization: Bearer TOKEN.",
            [(b"www-authenticate", b"Bearer")],
        )
        return False

    async def _refused(
        self,
        send: Send,
        status: int,
        title: str,
        message: str,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        body, content_type = self.refuse(status, title, message)
        await self._send(send, status, body, content_type, headers or [])

    async def _send(
        self,
        send: Send,
        status: int,
        body: bytes,
        content_type: str,
        headers: list[tuple[bytes, bytes]],
    ) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", content_type.encode()),
                    (b"content-length", str(len(body)).encode()),
                    *headers,
                    *SECURITY_HEADERS,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {bytes(k).lower() for k, _ in message.get("headers", ())}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in names]
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        return sending
