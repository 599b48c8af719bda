"""A ``Provider`` over a chain of models: the next one asked when the first fails.

``FallbackProvider`` tries the chain (``conch.shell.routing.pick_chain`` picks it) in order:
it moves on when a model raises an error, stays silent for ``shell.first_token_timeout_s``
before its reply begins, or replies with nothing at all, says so in a ``Note`` event, and
records every ``Attempt`` (which model answered, and why each before it was passed over).

Once a model's reply has begun, its text has been shown: a failure after that is raised as
it is, never papered over by another model's answer. A model's provider is opened on the
caller's thread, when the model is first asked (opening may ask the user for an API key);
with a first-token timeout, only its ``stream`` is pulled on a thread of its own, so that
the wait for its first words can end.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Literal, cast

from conch.errors import ConchError, ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    Note,
    ProviderEvent,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from conch.providers.base import Provider

__all__ = ["Attempt", "FallbackProvider", "Link", "NoModelAnswered", "Outcome"]

Outcome = Literal["answered", "error", "timeout", "empty", "busy"]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One model tried for a request: its ``outcome`` (``answered``; ``error``,
    ``timeout``, ``empty`` or ``busy``: passed over), why (``detail``), how long it took
    and the tokens it reported."""

    model: str
    outcome: Outcome
    detail: str = ""
    seconds: float = 0.0
    usage: Usage = field(default_factory=Usage)

    @property
    def line(self) -> str:
        """One line for the user: ``fast: timeout (no reply within 20 s)``."""
        why = f" ({self.detail})" if self.detail else ""
        return f"{self.model}: {self.outcome}{why}, {self.seconds:.1f} s"


@dataclass(slots=True)
class Link:
    """A model of a chain by ``name``: its provider is made by ``open`` when it is first
    asked (a remote model's client is never built while the local one answers)."""

    name: str
    open: Callable[[], Provider]
    provider: Provider | None = None
    worker: threading.Thread | None = None  # a reply given up on may still be running

    def get(self) -> Provider:
        if self.provider is None:
            self.provider = self.open()
        return self.provider


class _Passed(Exception):
    """A model passed over before its reply began: how, why, and the tokens it used."""

    def __init__(self, outcome: Outcome, detail: str, usage: Usage | None = None) -> None:
        super().__init__(detail)
        self.outcome, self.detail, self.usage = outcome, detail, usage or Usage()


class FallbackProvider:
    """A ``Provider`` over a chain of models, tried in order for each request.

    A model is passed over when it raises an error (``ConchError`` or ``OSError``) before
    its reply begins, when it stays silent for ``first_token_timeout_s`` before its first
    text or tool call (a stage such as loading the model breaks the silence), or (with
    ``on_empty``) when it finishes without either. A ``Note`` event says so
    and the next model is asked with the same messages; the last model's failure is raised.
    ``attempts`` holds the last request's ``Attempt`` list, ``answered_by`` the model that
    answered it.
    """

    def __init__(
        self,
        links: Sequence[Link],
        *,
        first_token_timeout_s: float | None = None,
        on_empty: bool = True,
    ) -> None:
        if not links:
            raise ValueError("a fallback chain needs at least one model")
        self.links = list(links)
        self.first_token_timeout_s = first_token_timeout_s
        self.on_empty = on_empty
        self.name = ">".join(link.name for link in self.links)
        self.attempts: list[Attempt] = []

    @property
    def answered_by(self) -> str | None:
        """The model that answered the last request (None: none did, or none was asked)."""
        last = self.attempts[-1] if self.attempts else None
        return last.model if last is not None and last.outcome == "answered" else None

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        self.attempts = []
        for index, link in enumerate(self.links):
            following = self.links[index + 1].name if index + 1 < len(self.links) else None
            started = time.monotonic()
            events: Iterator[ProviderEvent] | None = None
            try:
                try:
                    events = self._events(link, messages, options, tools)
                    empty_fails = self.on_empty and following is not None
                    first = yield from _until_reply(events, empty_fails)
                except (_Passed, ConchError, OSError) as exc:
                    why = str(exc) or type(exc).__name__
                    passed = exc if isinstance(exc, _Passed) else _Passed("error", why)
                    self._record(link, started, passed.outcome, passed.detail, passed.usage)
                    if following is None and passed is exc:
                        raise NoModelAnswered(self.attempts) from None
                    if following is None:
                        raise
                    yield Note(f"{link.name}: {passed.detail}; asking {following}")
                    continue
                usage = yield from _rest(first, events)
                self._record(link, started, "answered", "", usage)
                return
            finally:
                _close(events)

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """The first model's score (the one a chain is meant to be answered by)."""
        return self.links[0].get().likelihood(messages, reply)

    def close(self) -> None:
        """Close every provider the chain opened."""
        for link in self.links:
            if link.provider is not None:
                link.provider.close()

    def _record(self, link: Link, started: float, how: Outcome, why: str, usage: Usage) -> None:
        elapsed = time.monotonic() - started
        self.attempts.append(Attempt(link.name, how, why, elapsed, usage))

    def _events(
        self,
        link: Link,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None,
    ) -> Iterator[ProviderEvent]:
        """The link's events; with a first-token timeout, pulled on a thread of their own so
        the wait can end (a reply given up on is stopped at its next event). The model is
        opened here, on the caller's thread, either way: opening it may ask on the
        terminal (a missing API key), which a worker thread must never do."""
        timeout = self.first_token_timeout_s
        if timeout is not None and link.worker is not None and link.worker.is_alive():
            raise _Passed("busy", "still busy with a reply given up on")
        provider = link.get()
        if timeout is None:
            return iter(provider.stream(messages, options, tools))
        stream = partial(provider.stream, messages, options, tools)
        return _Timed(link, stream, timeout)


def _until_reply(
    events: Iterator[ProviderEvent], empty_fails: bool
) -> Generator[ProviderEvent, None, ProviderEvent | None]:
    """Yields the stages and notes before the reply begins; returns its first text or tool
    call (or ``Finished`` for an empty reply; None when the stream just ended). With
    ``empty_fails``, an empty reply is ``_Passed`` over instead."""
    for event in events:
        if isinstance(event, TextDelta | ToolCall):
            return event
        if isinstance(event, Finished):
            if empty_fails:
                raise _Passed("empty", "an empty reply", event.usage)
            return event
        yield event
    if empty_fails:
        raise _Passed("empty", "an empty reply")
    return None


def _rest(
    first: ProviderEvent | None, events: Iterator[ProviderEvent]
) -> Generator[ProviderEvent, None, Usage]:
    """Yields ``first`` and the rest of the reply; returns the usage its ``Finished``
    reported."""
    usage = first.usage if isinstance(first, Finished) else Usage()
    if first is not None:
        yield first
    for event in events:
        if isinstance(event, Finished):
            usage = event.usage
        yield event
    return usage


def _close(events: Iterator[ProviderEvent] | None) -> None:
    """Stop a stream given up on (a generator's ``close``; a worker told to stop)."""
    close = getattr(events, "close", None)
    if callable(close):
        close()


class NoModelAnswered(ProviderError):
    """Every model of a chain was passed over (timed out, busy, or replied with nothing)."""

    def __init__(self, attempts: Sequence[Attempt]) -> None:
        super().__init__("no model answered: " + "; ".join(a.line for a in attempts))
        self.attempts = tuple(attempts)


class _Timed:
    """A link's events pulled on a worker thread, so that waiting for them can end: until
    the reply begins (its first text, tool call or end), a silence of ``timeout`` seconds
    (no event at all; a stage such as loading the model counts as one) ends it with
    ``_Passed``. The worker is given the opened model's ``stream`` only. ``close`` tells
    the worker to stop at its next event."""

    def __init__(
        self, link: Link, stream: Callable[[], Iterable[ProviderEvent]], timeout: float
    ) -> None:
        self._queue: queue.Queue[tuple[str, object]] = queue.Queue()
        self._stop = threading.Event()
        self._timeout: float | None = timeout
        self._ended = False
        worker = threading.Thread(target=self._pull, args=(stream,), daemon=True)
        link.worker = worker
        worker.start()

    def __iter__(self) -> Iterator[ProviderEvent]:
        return self

    def __next__(self) -> ProviderEvent:
        if self._ended:
            raise StopIteration
        try:
            kind, value = self._queue.get(timeout=self._timeout)
        except queue.Empty:
            self.close()
            raise _Passed("timeout", f"no reply within {self._timeout:g} s") from None
        if kind == "error":
            self._ended = True
            raise cast(BaseException, value)
        if kind == "end":
            self._ended = True
            raise StopIteration
        event = cast(ProviderEvent, value)
        if isinstance(event, TextDelta | ToolCall | Finished):
            self._timeout = None  # the reply has begun: it may take its time
        return event

    def close(self) -> None:
        self._ended = True
        self._stop.set()

    def _pull(self, stream: Callable[[], Iterable[ProviderEvent]]) -> None:
        events: Iterator[ProviderEvent] | None = None
        try:
            events = iter(stream())
            for event in events:
                if self._stop.is_set():
                    break
                self._queue.put(("event", event))
        except BaseException as exc:  # handed to the consumer, which raises it
            self._queue.put(("error", exc))
        else:
            self._queue.put(("end", None))
        finally:
            _close(events)
