"""The provider protocol and the registry every provider (built-in or third-party) joins."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from conch.errors import ConfigError
from conch.messages import Chunk, GenerationOptions, Message, Response, ToolCall, Usage

if TYPE_CHECKING:
    from conch.config.settings import AISettings, DaemonSettings


@runtime_checkable
class Provider(Protocol):
    """A chat model. Implement ``stream``; ``complete`` is the helper over it.

    ``stream`` yields text deltas as they arrive, whole ``ToolCall``s (fragments reassembled by
    the provider), and a final chunk carrying ``usage`` and ``finish_reason``.
    """

    name: str

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Iterator[Chunk]: ...

    def close(self) -> None: ...


def complete(
    provider: Provider,
    messages: Sequence[Message],
    options: GenerationOptions | None = None,
    tools: Sequence[dict[str, Any]] | None = None,
    on_chunk: Callable[[Chunk], None] | None = None,
) -> Response:
    """Drain ``provider.stream`` into one ``Response``, calling ``on_chunk`` for each piece."""
    parts: list[str] = []
    calls: list[ToolCall] = []
    usage = Usage()
    finish: str | None = None
    for chunk in provider.stream(messages, options or GenerationOptions(), tools):
        if on_chunk is not None:
            on_chunk(chunk)
        if chunk.text:
            parts.append(chunk.text)
        if chunk.tool_call is not None:
            calls.append(chunk.tool_call)
        if chunk.usage is not None:
            usage = chunk.usage
        if chunk.finish_reason is not None:
            finish = chunk.finish_reason
    return Response(text="".join(parts), tool_calls=tuple(calls), usage=usage, finish_reason=finish)


ProviderFactory = Callable[["AISettings"], Provider]

_REGISTRY: dict[str, ProviderFactory] = {}


def likelihood(provider: Provider, messages: Sequence[Message], reply: str) -> float | None:
    """The log-probability the model gives ``reply`` after ``messages``, or None where the
    provider cannot say (OpenAI, Azure, servers other than llama.cpp, llama-cpp-python).

    Providers offer it as an optional ``likelihood`` method with this signature."""
    method = getattr(provider, "likelihood", None)
    return None if method is None else method(messages, reply)


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make a provider selectable as ``ai.provider: NAME`` (later registrations win)."""
    _REGISTRY[name] = factory


def provider_names() -> list[str]:
    """Names of every registered provider, built-ins included."""
    _ensure_builtins()
    return sorted(_REGISTRY)


def create_provider(settings: AISettings, daemon: DaemonSettings | None = None) -> Provider:
    """Build the provider that ``settings.provider`` names.

    ``daemon`` is the ``daemon`` settings section: when given and enabled, the built-in
    ``local`` provider runs in the warm model service instead of this process. A provider
    registered over the name ``local`` is used as registered.
    """
    _ensure_builtins()
    factory = _REGISTRY.get(settings.provider)
    if factory is None:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(
            f"unknown provider '{settings.provider}' in ai.provider; use one of: {known}"
        )
    from conch.providers import builtins

    builtin_local = settings.provider == "local" and factory is builtins.BUILTIN_PROVIDERS["local"]
    if daemon is not None and builtin_local:
        return builtins.local_provider(settings, daemon)
    return factory(settings)


def _ensure_builtins() -> None:
    # The built-in factories import their heavy backends lazily, inside the factory.
    if "local" in _REGISTRY:
        return
    from conch.providers import builtins

    for name, factory in builtins.BUILTIN_PROVIDERS.items():
        _REGISTRY.setdefault(name, factory)
