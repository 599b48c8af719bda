"""What ``conch serve`` is configured with: where it listens, its key, its caps and tools.

The rule that matters most: the server never answers without a key. ``conch serve`` makes a
token when the user gave none, on loopback only: any other address needs a key the user chose
(``conch.host.auth.check_access``, the rule ``conch mcp --http`` follows too), and ``no_auth``
(``--no-auth``) is allowed on loopback alone. ``GIVE_KEY`` says how a user gives the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conch.agent.builtin import ToolOptions

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
API_KEY_ENV = "CONCH_SERVER_API_KEY"
GIVE_KEY = f"--api-key or {API_KEY_ENV}"


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
    refused). ``api_key``: what every API request must carry (``conch.host.auth.new_token``
    makes one); ``no_auth``: no key at all, on loopback only. ``max_iterations``: model
    replies per request. ``max_tokens`` and ``temperature``: the defaults when a request
    names none. ``events``: the extra ``conch.*`` stream chunks are sent unless a request
    turns them off."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    api_key: str | None = None
    no_auth: bool = False
    caps: Caps = field(default_factory=Caps)
    tools: ToolOptions = field(default_factory=ToolOptions)
    max_iterations: int = 10
    max_tokens: int = 1024
    temperature: float = 0.0
    events: bool = True
