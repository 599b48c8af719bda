"""How many tokens a model's context holds, from the config or asked of its server once.

The conversation is pruned to fit the context window, so a window set too small throws away
context a model could use, and one set too large lets a server cut the prompt itself. The
window comes, in this order, from:

1. ``context_window`` on the model's entry (``ai`` or a ``models`` entry): the user knows;
2. the embedded model's ``ai.local.n_ctx``: the window it is loaded with;
3. the server, asked once per base URL and model:

   - llama.cpp ``GET /props``: ``default_generation_settings.n_ctx`` (the window it runs);
   - vLLM and other OpenAI-compatible servers ``GET /v1/models``: the model's
     ``max_model_len`` (or ``context_length``, ``context_window``);
   - Ollama (a server whose ``GET /api/version`` answers) ``POST /api/show``: ``num_ctx``
     among the model's parameters (what it runs with), else
     ``model_info["<arch>.context_length"]`` (what the model was trained for);

4. ``DEFAULT_WINDOW`` (4,096 tokens), with the reason recorded.

``context_window`` is the one function every front end (the agent's ``Session``, the HTTP
server, the hybrid shell) takes the window from. OpenAI and Azure are not asked: their
model lists do not say.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

    from conch.config.settings import AISettings

DEFAULT_WINDOW = 4096
# A server that takes longer than this to say is treated as one that cannot.
PROBE_TIMEOUT_S = 3.0

_known: dict[tuple[str, str], ContextWindow] = {}
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """A context window in tokens, and where it came from: ``source`` is ``config``,
    ``local``, ``llama.cpp``, ``vllm``, ``ollama`` or ``default``; ``reason`` says why the
    default was taken (None otherwise)."""

    tokens: int
    source: str
    reason: str | None = None

    def describe(self) -> str:
        """One line for the user: ``8192 tokens (from the llama.cpp server's /props)``."""
        where = {
            "config": "context_window in the config",
            "local": "ai.local.n_ctx, the window the embedded model is loaded with",
            "llama.cpp": "the llama.cpp server's /props",
            "vllm": "the server's /v1/models (max_model_len)",
            "ollama": "the Ollama server's /api/show",
        }.get(self.source)
        if where is None:
            return f"{self.tokens} tokens (the default: {self.reason or 'not known'})"
        return f"{self.tokens} tokens (from {where})"


def context_window(
    ai: AISettings, *, client: httpx.Client | None = None, refresh: bool = False
) -> ContextWindow:
    """The context window of the model ``ai`` configures (see the module documentation).

    A server's answer is remembered for the process (``refresh`` asks again); a server that
    cannot be reached gives the default without being remembered, so it is asked again once
    it is up. ``client`` replaces the HTTP client (tests, a caller with its own)."""
    if ai.context_window is not None:
        return ContextWindow(ai.context_window, "config")
    if ai.provider == "local":
        return ContextWindow(ai.local.n_ctx, "local")
    if ai.provider == "azure":
        return _default("Azure OpenAI does not say; set context_window on the model's entry")
    if ai.provider != "openai":
        return _default(f"the {ai.provider} provider does not say")
    from urllib.parse import urlsplit

    from conch.providers.openai import DEFAULT_BASE_URL

    base_url = (ai.base_url or DEFAULT_BASE_URL).rstrip("/")
    try:
        host = (urlsplit(base_url).hostname or "").lower()
    except ValueError:  # not a URL: the provider says so when it is used
        return _default(f"ai.base_url {base_url!r} is not a URL")
    if host == "api.openai.com":
        return _default("OpenAI's model list does not say; set context_window on the entry")
    key = (base_url, ai.model or "")
    with _lock:
        known = None if refresh else _known.get(key)
    if known is not None:
        return known
    window, final = _ask(base_url, ai, client)
    if final:
        with _lock:
            _known[key] = window
    return window


def forget_windows() -> None:
    """Forget every server's answer (tests; a server restarted with another window)."""
    with _lock:
        _known.clear()


def _default(reason: str) -> ContextWindow:
    return ContextWindow(DEFAULT_WINDOW, "default", reason)


def _ask(base_url: str, ai: AISettings, client: httpx.Client | None) -> tuple[ContextWindow, bool]:
    """The server's answer, and whether it is final (False: the server was not reached)."""
    import httpx

    own = client is None
    http = client if client is not None else _client(ai)
    root = base_url.removesuffix("/v1")
    try:
        for probe, source in ((_llama_cpp, "llama.cpp"), (_vllm, "vllm"), (_ollama, "ollama")):
            tokens = probe(http, root, base_url, ai.model)
            if tokens is not None:
                return ContextWindow(tokens, source), True
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        reason = f"the server at {base_url} could not be reached ({type(exc).__name__})"
        return _default(reason), False
    except (httpx.TransportError, httpx.HTTPError, httpx.InvalidURL) as exc:
        # reached, but it did not answer in time or in HTTP; or base_url is not a URL
        reason = (
            f"the server at {base_url} did not answer the question ({type(exc).__name__}); "
            "set context_window on the model's entry"
        )
        return _default(reason), True
    finally:
        if own:
            http.close()
    reason = (
        f"the server at {base_url} does not say (no llama.cpp /props, no max_model_len in "
        "/v1/models, no Ollama /api/show); set context_window on the model's entry"
    )
    return _default(reason), True


def _client(ai: AISettings) -> httpx.Client:
    import httpx

    from conch.config.credentials import lookup_secret

    key = lookup_secret(ai.api_key_env)
    headers = {"User-Agent": "conch", **({"Authorization": f"Bearer {key}"} if key else {})}
    timeout = min(PROBE_TIMEOUT_S, ai.timeout)
    return httpx.Client(headers=headers, timeout=httpx.Timeout(timeout))


def _json(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _positive(value: Any) -> int | None:
    """``value`` as a window: a whole number of tokens above zero, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value > 0 else None


def _llama_cpp(http: httpx.Client, root: str, base_url: str, model: str | None) -> int | None:
    data = _json(http.get(f"{root}/props"))
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    if isinstance(settings, dict) and _positive(settings.get("n_ctx")):
        return _positive(settings.get("n_ctx"))
    return _positive(data.get("n_ctx"))


def _vllm(http: httpx.Client, root: str, base_url: str, model: str | None) -> int | None:
    data = _json(http.get(f"{base_url}/models"))
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    models = [e for e in entries if isinstance(e, dict)]
    named = [e for e in models if e.get("id") == model] if model else []
    # Another model's window says nothing of this one's: the first only when it is the only.
    for entry in named or (models if len(models) == 1 else []):
        for key in ("max_model_len", "context_length", "context_window"):
            tokens = _positive(entry.get(key))
            if tokens is not None:
                return tokens
    return None


def _ollama(http: httpx.Client, root: str, base_url: str, model: str | None) -> int | None:
    if not model:
        return None
    # Asked only of a server that says it is Ollama: /api/show is a POST, which another
    # server could take for a request to act on.
    version = _json(http.get(f"{root}/api/version"))
    if not isinstance(version, dict) or "version" not in version:
        return None
    data = _json(http.post(f"{root}/api/show", json={"model": model}))
    if not isinstance(data, dict):
        return None
    parameters = data.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx" and _positive(value.strip()):
                return _positive(value.strip())
    info = data.get("model_info")
    if not isinstance(info, dict):
        return None
    arch = info.get("general.architecture")
    if isinstance(arch, str) and _positive(info.get(f"{arch}.context_length")):
        return _positive(info.get(f"{arch}.context_length"))
    lengths = [_positive(v) for k, v in info.items() if str(k).endswith(".context_length")]
    return next((n for n in lengths if n is not None), None)
