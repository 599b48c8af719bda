"""What ``conch serve`` is configured with: where it listens, its key, its caps and tools.

The rule that matters most lives here: a server that listens on anything but the loopback
interface must have an API key (``check_bind``), so a model that can run commands is never
open to the network.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from conch.agent.builtin import ToolOptions
from conch.errors import UsageError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
API_KEY_ENV = "CONCH_SERVER_API_KEY"
LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback(host: str) -> bool:
    """True when ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_bind(host: str, api_key: str | None) -> None:
    """UsageError when ``host`` is not a loopback address and there is no API key."""
    if api_key is not None and not api_key.strip():
        raise UsageError(f"the API key is empty; give a real one with --api-key or {API_KEY_ENV}")
    if not is_loopback(host) and not api_key:
        raise UsageError(
            f"refusing to listen on {host} without an API key: set {API_KEY_ENV} or give "
            "--api-key (only a loopback address such as 127.0.0.1 may go without one)"
        )


@dataclass(frozen=True, slots=True)
class Caps:
    """How much one request may ask for.

    ``body_bytes``: the request body; ``message_chars``: one message's text;
    ``messages``: messages in one request; ``timeout_s``: one request, start to end
    (a stream that runs past it ends with an error); ``concurrent``: requests served at
    once (the others wait their turn)."""

    body_bytes: int = 4 * 1024 * 1024
    message_chars: int = 256_000
    messages: int = 1000
    timeout_s: float = 600.0
    concurrent: int = 64


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything the server needs besides the models.

    ``tools``: conch's own tools for every request (sandbox root, bash and its execution
    mode; there is no one to ask, so ``confirm`` stays None and whatever needs a yes is
    refused). ``max_iterations``: model replies per request. ``max_tokens`` and
    ``temperature``: the defaults when a request names none. ``events``: the extra
    ``conch.*`` stream chunks are sent unless a request turns them off."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    api_key: str | None = None
    caps: Caps = field(default_factory=Caps)
    tools: ToolOptions = field(default_factory=ToolOptions)
    max_iterations: int = 10
    max_tokens: int = 1024
    temperature: float = 0.0
    events: bool = True
