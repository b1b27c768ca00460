"""ASGI middleware: every request's checks (Host, Origin, JSON-only POSTs, body size) and the security headers."""

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

MAX_BODY = 16 * 1024  # bytes of a request body: the API's largest (a new game) is under 200
LOOPBACK = ("127.0.0.1", "localhost", "::1")
HEADERS = (
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                 b"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                                 b"form-action 'self'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


def excerpt(value: object, limit: int = 40) -> str:
    """``value`` as one short line for an error message: control characters escaped, cut to ``limit``."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(value))
    return text if len(text) <= limit else f"{text[:limit - 5]}...{text[-2:]}"


def host_name(host: str) -> str:
    """A ``Host`` header's name, lower case, without its port (``[::1]:8000`` -> ``::1``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """The checks around ``app``; ``hosts``: the names and addresses a client may call the server by."""

    def __init__(self, app: Any, hosts: Iterable[str] = LOOPBACK, max_body: int = MAX_BODY) -> None:
        self.app, self.hosts, self.max_body = app, {host_name(h) for h in hosts}, max_body

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        refusal = self._refusal(scope, headers)
        if refusal is None and scope["method"] == "POST":
            body, refusal = await self._body(receive, headers)
            if refusal is None:
                receive = _replay(body, receive)
        if refusal is not None:
            return await _answer(send_with_headers, *refusal)
        await self.app(scope, receive, send_with_headers)

    def _refusal(self, scope: dict, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host", "")
        if host_name(host) not in self.hosts:
            return 400, (f"host {excerpt(host)!r} is not an address this server serves; open it at the address "
                         f"`koikoi play` printed")
        origin = headers.get("origin")
        if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower() != host.strip().lower()):
            return 403, f"origin {excerpt(origin)!r}: requests from other sites are refused"
        if scope["method"] == "POST":
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind != "application/json":
                return 415, f"a POST must be JSON (Content-Type: application/json), got {excerpt(kind or 'none')!r}"
            length = headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > self.max_body):
                return 413, f"request body over {self.max_body} bytes"
        return None

    async def _body(self, receive: Any, headers: dict[str, str]) -> tuple[bytes, tuple[int, str] | None]:
        """The whole body, up to ``max_body`` bytes (a chunked body has no length to check first)."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"", (400, "the request ended before its body")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return b"", (413, f"request body over {self.max_body} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), None


def _replay(body: bytes, receive: Any) -> Any:
    first = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> dict:
        return first.pop() if first else await receive()

    return replay


async def _answer(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
