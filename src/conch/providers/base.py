"""The provider protocol and the registry every provider (built-in or third-party) joins."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from conch.errors import ConfigError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    ProviderEvent,
    Response,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from conch.config.settings import AISettings


@runtime_checkable
class Provider(Protocol):
    """A chat model. ``stream`` is the one way to ask it; ``complete`` is the helper over it.

    ``stream`` yields ``ProviderEvent``s: ``TextDelta``s as the reply arrives, whole
    ``ToolCall``s (fragments reassembled by the provider), ``Stage``s and ``Note``s whenever
    they happen, and one ``Finished`` (usage, finish reason) last.

    ``likelihood`` is the log-probability the model gives ``reply`` after ``messages``, or
    None where the provider cannot say (OpenAI, Azure, servers other than llama.cpp,
    llama-cpp-python); ``generation.review`` ranks answers by it.
    """

    name: str

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]: ...

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None: ...

    def close(self) -> None: ...


EventCallback = Callable[[ProviderEvent], None]

E = TypeVar("E")
R = TypeVar("R")


def drain(events: Generator[E, None, R], on_event: Callable[[E], None] | None = None) -> R:
    """Run an event generator to its end, handing each event to ``on_event``; its result."""
    while True:
        try:
            event = next(events)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        if on_event is not None:
            on_event(event)


def respond(
    provider: Provider,
    messages: Sequence[Message],
    options: GenerationOptions | None = None,
    tools: Sequence[ToolSpec] | None = None,
) -> Generator[ProviderEvent, None, Response]:
    """The provider's events as they come; returns the whole ``Response`` they make up."""
    parts: list[str] = []
    calls: list[ToolCall] = []
    usage = Usage()
    finish: str | None = None
    logprob: float | None = None
    for event in provider.stream(messages, options or GenerationOptions(), tools):
        yield event
        if isinstance(event, TextDelta):
            parts.append(event.text)
        elif isinstance(event, ToolCall):
            calls.append(event)
        elif isinstance(event, Finished):
            usage, finish, logprob = event.usage, event.finish_reason, event.logprob
    text = "".join(parts)
    return Response(text, tuple(calls), usage, finish, logprob)


def complete(
    provider: Provider,
    messages: Sequence[Message],
    options: GenerationOptions | None = None,
    tools: Sequence[ToolSpec] | None = None,
    on_event: EventCallback | None = None,
) -> Response:
    """The whole ``Response``, calling ``on_event`` for each event as it comes."""
    return drain(respond(provider, messages, options, tools), on_event)


ProviderFactory = Callable[["AISettings"], Provider]


# The built-in factories import their backends only when called.
def _local(settings: AISettings) -> Provider:
    from conch.providers.local.provider import LocalProvider

    return LocalProvider.from_settings(settings)


def _openai(settings: AISettings) -> Provider:
    from conch.providers.openai import OpenAIProvider

    return OpenAIProvider.from_settings(settings)


def _azure(settings: AISettings) -> Provider:
    from conch.providers.openai import OpenAIProvider

    return OpenAIProvider.azure_from_settings(settings)


def _scripted(settings: AISettings) -> Provider:
    from conch.providers.scripted import ScriptedProvider

    return ScriptedProvider.from_settings(settings)


BUILTIN_PROVIDERS: dict[str, ProviderFactory] = {
    "local": _local,
    "openai": _openai,
    "azure": _azure,
    "scripted": _scripted,
}

_REGISTRY: dict[str, ProviderFactory] = dict(BUILTIN_PROVIDERS)


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make a provider selectable as ``ai.provider: NAME`` (later registrations win)."""
    _REGISTRY[name] = factory


def provider_names() -> list[str]:
    """Every selectable provider name, built-in and registered."""
    return sorted(_REGISTRY)


def is_builtin(name: str) -> bool:
    """True when ``name`` selects conch's own provider of that name (not one registered over
    it)."""
    builtin = BUILTIN_PROVIDERS.get(name)
    return builtin is not None and _REGISTRY.get(name) is builtin


def create_provider(settings: AISettings) -> Provider:
    """Build the provider that ``settings.provider`` names (the model runs in this process;
    ``conch.daemon.open_provider`` puts the built-in ``local`` one in the warm service)."""
    factory = _REGISTRY.get(settings.provider)
    if factory is None:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(
            f"unknown provider '{settings.provider}' in ai.provider; use one of: {known}"
        )
    return factory(settings)
