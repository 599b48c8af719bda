"""Who may use a server conch runs (``conch serve``, ``conch mcp --http``): the holder of its
token, even on loopback.

Any program on this machine can connect to 127.0.0.1, and these servers drive an agent that
runs commands: every request must carry a secret. ``server_key`` decides a server's key: the
user's, or on loopback a fresh token (``new_token``; the front end prints it), checked by
``check_access``, the one rule for where a server may listen with which key. ``RequireToken``
is the ASGI middleware that checks every request; ``is_loopback`` is the one rule for what
loopback is, and ``loopback_names`` the host names a request to a loopback server may give.

Plain ASGI, no web framework: importing this module costs nothing.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, NamedTuple

from conch.errors import UsageError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost"})
UNAUTHORIZED = (
    "missing or wrong API key: send Authorization: Bearer KEY "
    "(the key the server was started with, or the token it printed)"
)


def is_loopback(host: str) -> bool:
    """True when ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def new_token() -> str:
    """A fresh random token (32 bytes, URL-safe) for a server started without a key."""
    return secrets.token_urlsafe(32)


def loopback_names(host: str) -> list[str]:
    """The names a request to a server listening on loopback ``host`` may give in ``Host``
    (an IPv6 address in brackets): this machine's, and ``host`` itself. A page elsewhere
    cannot reach such a server by renaming itself (DNS rebinding)."""
    names = ["127.0.0.1", "localhost", "[::1]"]
    shown = (f"[{host.strip('[]')}]" if ":" in host else host).lower()
    if shown not in names:
        names.append(shown)
    return names


class ServerKey(NamedTuple):
    """The key a server starts with (None: ``--no-auth``), and whether conch made it (then
    the front end must print it: there is no other way to learn it)."""

    key: str | None
    made: bool


def server_key(host: str, key: str | None, *, no_auth: bool, give: str) -> ServerKey:
    """The key of a server on ``host``: ``key``, or with none (and no ``no_auth``) on
    loopback a fresh token. UsageError (``check_access``) when the server may not start so;
    ``give`` says how a user gives a key."""
    made = key is None and not no_auth and is_loopback(host)
    if made:
        key = new_token()
    check_access(host, key, no_auth=no_auth, give=give)
    return ServerKey(key, made)


def check_access(host: str, key: str | None, *, no_auth: bool = False, give: str) -> None:
    """UsageError unless a server on ``host`` may start this way: with a key, anywhere; with
    none (``no_auth``), only on loopback. ``give`` says how a user gives a key."""
    if key is not None and not key.strip():
        raise UsageError(f"the API key is empty; give a real one with {give}")
    if no_auth:
        if key:
            raise UsageError(f"--no-auth turns the key off, but one is set ({give}): drop one")
        if not is_loopback(host):
            raise UsageError(
                f"--no-auth is only allowed on a loopback address such as 127.0.0.1, not {host}"
            )
        return
    if not key and not is_loopback(host):
        raise UsageError(
            f"refusing to listen on {host} without an API key: give one with {give} "
            "(on a loopback address such as 127.0.0.1 conch makes a token itself)"
        )
    if not key:
        raise UsageError(f"the server has no API key: give one with {give}")


def always_checked(path: str) -> bool:
    """No path is public: every request needs the token."""
    return False


class RequireToken:
    """ASGI middleware: an HTTP request whose path is not ``public`` must carry ``token`` as
    ``Authorization: Bearer TOKEN`` or ``X-API-Key: TOKEN`` (compared in constant time), or it
    gets a 401 in OpenAI's error shape; a WebSocket without it is closed."""

    def __init__(
        self, app: ASGIApp, token: str, public: Callable[[str], bool] = always_checked
    ) -> None:
        if not token:
            raise ValueError("RequireToken needs a token")
        self.app, self.token, self.public = app, token.encode("utf-8"), public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or self.public(scope["path"]) or self.allowed(scope):
            await self.app(scope, receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await _refuse(send)

    def allowed(self, scope: Scope) -> bool:
        """Whether the request's headers carry the token."""
        bearer: bytes | None = None
        api_key: bytes | None = None
        for name, value in scope.get("headers", ()):
            if name == b"authorization" and bearer is None:
                scheme, _, given = bytes(value).partition(b" ")
                bearer = given.strip() if scheme.lower() == b"bearer" else b""
            elif name == b"x-api-key" and api_key is None:
                api_key = bytes(value).strip()
        given = bearer if bearer else api_key or b""
        return hmac.compare_digest(given, self.token)


async def _refuse(send: Send) -> None:
    body = json.dumps(
        {
            "error": {
                "message": UNAUTHORIZED,
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        }
    ).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode("ascii")),
                (b"www-authenticate", b"Bearer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
