"""The models a server answers with, opened once and shared by every request.

Each request gets its own ``Session`` over a ``SharedProvider``: the session cannot close
the model, and a model that runs in this process (the embedded one without the model
service) takes one request at a time, the others waiting their turn. The model service
queues requests itself, and a remote server takes them in parallel.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from conch.agent.session import ToolCallMode, native_tool_calls
from conch.messages import GenerationOptions, Message, ProviderEvent, ToolSpec
from conch.providers.base import Provider
from conch.providers.window import DEFAULT_WINDOW, context_window

if TYPE_CHECKING:
    from conch.config.settings import AISettings, Settings


class SharedProvider:
    """``inner`` as many sessions use it: ``close`` does nothing (``release`` closes it),
    and streams take turns when the model runs in this process."""

    def __init__(self, inner: Provider, serial: bool | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.native_tool_calls = native_tool_calls(inner)
        self._serial = serial
        self._turn = threading.Lock()
        tokenizer = getattr(inner, "count_tokens", None)
        if tokenizer is not None:
            self.count_tokens: Callable[[str], int | None] = self._counter(tokenizer)

    @property
    def serial(self) -> bool:
        """True when one request at a time may use the model: the embedded model in this
        process (also the model service's provider once it fell back to this process)."""
        if self._serial is not None:
            return self._serial
        return self.inner.name == "local" and bool(getattr(self.inner, "in_process", True))

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        if not self.serial:
            yield from self.inner.stream(messages, options, tools)
            return
        with self._turn:
            yield from self.inner.stream(messages, options, tools)

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        if not self.serial:
            return self.inner.likelihood(messages, reply)
        with self._turn:
            return self.inner.likelihood(messages, reply)

    def close(self) -> None:
        """Nothing: the model outlives the request (``release`` closes it)."""

    def release(self) -> None:
        """Close the model itself."""
        self.inner.close()

    def _counter(self, tokenizer: Callable[[str], int | None]) -> Callable[[str], int | None]:
        def count(text: str) -> int | None:
            if not self.serial:
                return tokenizer(text)
            with self._turn:
                return tokenizer(text)

        return count


class ModelTable:
    """The models a server offers, by the name clients send as ``model``: the first is the
    default, used for a request that names none or a name the server does not know."""

    def __init__(
        self,
        openers: dict[str, Callable[[], Provider]],
        context_tokens: dict[str, int | Callable[[], int]] | None = None,
        tool_calls: dict[str, ToolCallMode] | None = None,
    ) -> None:
        """``context_tokens``: each model's context window, or how to learn it."""
        if not openers:
            raise ValueError("a server needs at least one model")
        self._openers = dict(openers)
        self._context = dict(context_tokens or {})
        self._tool_calls = dict(tool_calls or {})
        self._open: dict[str, SharedProvider] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(cls, providers: dict[str, Provider], context_tokens: int = DEFAULT_WINDOW) -> ModelTable:
        """A table over providers already made (tests, embedding the server in a program)."""
        openers = {name: _given(p) for name, p in providers.items()}
        return cls(openers, {name: context_tokens for name in providers})

    @classmethod
    def from_settings(cls, settings: Settings) -> ModelTable:
        """The configured model (``ai``), then each entry of the ``models`` section, each
        opened as the other front ends open it (the embedded model through the model
        service when it is enabled) at its first request."""
        entries = {model_id(settings.ai): settings.ai}
        for name, ai in settings.models.items():
            entries.setdefault(name, ai)
        openers = {name: _opener(ai, settings) for name, ai in entries.items()}
        # Configured, the embedded model's, or asked of the server at its first request.
        context: dict[str, int | Callable[[], int]] = {
            name: _window(ai) for name, ai in entries.items()
        }
        return cls(openers, context, {name: ai.tool_calls for name, ai in entries.items()})

    @property
    def names(self) -> list[str]:
        return list(self._openers)

    @property
    def default(self) -> str:
        return next(iter(self._openers))

    def resolve(self, name: str | None) -> str:
        """The model that answers a request naming ``name``."""
        return name if name in self._openers else self.default

    def provider(self, name: str) -> SharedProvider:
        """The model ``name``, opened at its first use."""
        with self._lock:
            shared = self._open.get(name)
            if shared is None:
                shared = SharedProvider(self._openers[name]())
                self._open[name] = shared
            return shared

    def context_tokens(self, name: str) -> int:
        """The context window of the model ``name`` (a server is asked at the model's
        first request; ``conch.providers.window`` remembers its answer)."""
        window = self._context.get(name, DEFAULT_WINDOW)
        return window() if callable(window) else window

    def tool_calls(self, name: str) -> ToolCallMode:
        """How the model ``name`` calls tools (``ai.tool_calls``)."""
        return self._tool_calls.get(name, "auto")

    def close(self) -> None:
        """Close every model opened so far."""
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        for shared in opened:
            shared.release()


def model_id(ai: AISettings) -> str:
    """The name a model goes by in ``/v1/models``: its configured name, its file's name,
    or the embedded model's."""
    if ai.model:
        return ai.model
    if ai.provider == "local":
        if ai.local.model_path:
            return Path(ai.local.model_path).stem
        from conch.providers.local.model_files import MODEL_FILENAME

        return Path(MODEL_FILENAME).stem
    return ai.provider


def _given(provider: Provider) -> Callable[[], Provider]:
    return lambda: provider


def _window(ai: AISettings) -> Callable[[], int]:
    return lambda: context_window(ai).tokens


def _opener(ai: AISettings, settings: Settings) -> Callable[[], Provider]:
    def open_model() -> Provider:
        from conch.daemon import open_provider

        return open_provider(ai, settings.daemon)

    return open_model
