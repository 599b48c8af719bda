"""Which models answer a line of ``conch shell``, and the next one when the first fails.

A line for the model is a ``question`` (asked about something), a ``command`` (asked for
something done on this machine) or ``code`` (written, fixed or explained): ``task_type``
tells them apart with word patterns (``conch.command.intent.classify`` for questions and
tasks), in microseconds. ``pick_chain`` turns that into an ordered chain of configured
models (``shell.routing``, then ``shell.fallback``; local models first by default, so a
remote model is asked only when the local one fails), and ``FallbackProvider`` is a
``Provider`` that tries the chain in order: it moves on when a model raises an error, stays
silent for ``shell.first_token_timeout_s`` before its reply begins, or replies with nothing
at all, says so in a
``Note`` event, and records every ``Attempt`` (which model answered, and why each before it
was passed over).

Once a model's reply has begun, its text has been shown: a failure after that is raised as
it is, never papered over by another model's answer.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, cast, get_args
from urllib.parse import urlparse

from conch.command.intent import Intent, classify
from conch.config.settings import AISettings, Settings
from conch.errors import ConchError, ConfigError, ProviderError, UsageError
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
from conch.providers.base import Provider, create_provider
from conch.shell.models import ModelChoice, choose_model, default_choice

__all__ = [
    "TASK_TYPES",
    "Attempt",
    "FallbackProvider",
    "FallbackSettings",
    "Link",
    "NoModelAnswered",
    "Outcome",
    "TaskType",
    "chain_provider",
    "is_local",
    "pick_chain",
    "task_type",
]

TaskType = Literal["question", "command", "code"]
TASK_TYPES: tuple[TaskType, ...] = get_args(TaskType)
Outcome = Literal["answered", "error", "timeout", "empty", "busy"]

_SOURCE = r"py|pyi|js|mjs|ts|tsx|jsx|go|rs|c|h|cc|cpp|hpp|java|kt|rb|php|lua|swift|cs|scala|sql|sh"
_SOURCE_FILE = re.compile(rf"[\w./-]+\.(?:{_SOURCE})\b", re.I)
_CODE_TERMS = re.compile(
    r"\b(?:traceback|stack ?trace|segfault|syntax ?error|compiler? error|type ?error"
    r"|\w+(?:Error|Exception)\b|unit tests?|refactor\w*|code review|regex(?:es)?"
    r"|regular expression|function|method|class|decorator|snippet|source code)\b",
    re.I,
)
_CODE_VERBS = re.compile(
    r"\b(?:write|implement|refactor|rewrite|debug|fix|patch|edit|change|modify|add|rename"
    r"|explain|review|document|test|optimi[sz]e|port|translate)\b",
    re.I,
)
_PROGRAM = re.compile(r"\b(?:script|program|code|parser|module|library|test suite)s?\b", re.I)
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "[::1]"})
_LOCAL_PROVIDERS = frozenset({"local", "scripted"})


def task_type(text: str) -> TaskType:
    """What kind of line ``text`` (one sent to the model) is: ``code`` when it shows or
    names code (a code block, a traceback or error name, a source file or a program with a
    verb that writes or explains it, words such as *function*, *regex*, *refactor*), else
    ``question`` or ``command`` as ``conch.command.intent.classify`` says."""
    if "```" in text or _CODE_TERMS.search(text):
        return "code"
    if _CODE_VERBS.search(text) and (_SOURCE_FILE.search(text) or _PROGRAM.search(text)):
        return "code"
    return "question" if classify(text) is Intent.QUESTION else "command"


def is_local(ai: AISettings) -> bool:
    """Whether ``ai`` runs on this machine: the embedded model, or a server on a loopback
    address (a llama.cpp server on 127.0.0.1)."""
    if ai.provider in _LOCAL_PROVIDERS:
        return True
    if ai.provider != "openai" or not ai.base_url:
        return False
    host = (urlparse(ai.base_url).hostname or "").lower()
    return host in _LOCAL_HOSTS or host.startswith("127.") or host.endswith(".localhost")


@dataclass(frozen=True, slots=True)
class FallbackSettings:
    """The routing and fallback settings of the ``shell`` section.

    ``routing``: the models that answer each task type, in order, by name (an entry of
    ``models:``, or the ``ai`` section by the name the prompt shows; a type without an
    entry: the active model); ``fallback``: models tried after them; ``first_token_timeout_s``:
    how long a model may stay silent before its reply begins (None: the provider's own
    ``timeout`` applies); ``local_first``: local models before remote ones in a chain;
    ``on_empty``: an empty reply counts as a failure.
    """

    routing: Mapping[TaskType, tuple[str, ...]] = field(default_factory=dict)
    fallback: tuple[str, ...] = ()
    first_token_timeout_s: float | None = None
    local_first: bool = True
    on_empty: bool = True

    @classmethod
    def from_mapping(cls, shell: Mapping[str, Any]) -> FallbackSettings:
        """The settings from the ``shell`` section's keys (``routing``, ``fallback``,
        ``first_token_timeout_s``, ``local_first``, ``fallback_on_empty``); other keys are
        ignored. ConfigError naming the key when a value has the wrong shape."""
        raw_routing = shell.get("routing") or {}
        if not isinstance(raw_routing, Mapping):
            raise ConfigError("shell.routing must map question, command and code to models")
        routing: dict[TaskType, tuple[str, ...]] = {}
        for kind, names in raw_routing.items():
            if kind not in TASK_TYPES:
                raise ConfigError(
                    f"shell.routing.{kind}: not a task type (use {', '.join(TASK_TYPES)})"
                )
            routing[kind] = _names(names, f"shell.routing.{kind}")
        timeout = shell.get("first_token_timeout_s")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            raise ConfigError("shell.first_token_timeout_s must be a number of seconds above 0")
        flags = {}
        for key in ("local_first", "fallback_on_empty"):
            value = shell.get(key, True)
            if not isinstance(value, bool):
                raise ConfigError(f"shell.{key} must be true or false")
            flags[key] = value
        return cls(
            routing,
            _names(shell.get("fallback") or [], "shell.fallback"),
            None if timeout is None else float(timeout),
            flags["local_first"],
            flags["fallback_on_empty"],
        )

    def problems(self, settings: Settings) -> list[str]:
        """The names these settings give that ``settings`` has no model of, one line each."""
        named = [(f"shell.routing.{k}", n) for k, names in self.routing.items() for n in names]
        named += [("shell.fallback", n) for n in self.fallback]
        found = []
        active = default_choice(settings.ai)
        for key, name in named:
            try:
                _choice(settings, name, active, key)
            except UsageError as exc:
                found.append(str(exc))
        return found


def pick_chain(
    task: TaskType,
    settings: Settings,
    active: ModelChoice,
    fallback: FallbackSettings,
    *,
    pinned: bool = False,
) -> list[ModelChoice]:
    """The models to try for a line of type ``task``, each once: ``shell.routing``'s
    models for it (the ``active`` one when it has none, or when the user ``pinned`` the
    active model with ``:model``/``--model``), then ``shell.fallback``'s. With
    ``local_first`` the local models of the chain come before the remote ones (the order
    otherwise kept), except that a pinned model stays first. UsageError for an unknown
    name."""
    head = [active] if pinned or task not in fallback.routing else []
    names = [] if head else list(fallback.routing[task])
    chain = head + [_choice(settings, name, active) for name in (*names, *fallback.fallback)]
    unique: list[ModelChoice] = []
    for choice in chain:
        if all(choice.name != seen.name for seen in unique):
            unique.append(choice)
    if not fallback.local_first:
        return unique
    fixed, rest = (unique[:1], unique[1:]) if pinned else ([], unique)
    return fixed + sorted(rest, key=lambda choice: not is_local(choice.ai))


def _choice(
    settings: Settings, name: str, active: ModelChoice, key: str = "shell.routing"
) -> ModelChoice:
    """The model called ``name``: the active one, an entry of ``models:``, or the ``ai``
    section by the name the prompt shows for it."""
    if name == active.name:
        return active
    ai = default_choice(settings.ai)
    if name == ai.name and name not in settings.models:
        return ai
    return choose_model(settings, name, key)


def _names(value: object, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{key} must be a model name or a list of model names")
    return tuple(value)


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
        the wait can end (a reply given up on is stopped at its next event)."""
        timeout = self.first_token_timeout_s
        if timeout is None:
            return iter(link.get().stream(messages, options, tools))
        if link.worker is not None and link.worker.is_alive():
            raise _Passed("busy", "still busy with a reply given up on")
        return _Timed(link, messages, options, tools, timeout)


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
    ``_Passed``. ``close`` tells the worker to stop at its next event."""

    def __init__(
        self,
        link: Link,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None,
        timeout: float,
    ) -> None:
        self._queue: queue.Queue[tuple[str, object]] = queue.Queue()
        self._stop = threading.Event()
        self._timeout: float | None = timeout
        self._ended = False
        worker = threading.Thread(
            target=self._pull, args=(link, messages, options, tools), daemon=True
        )
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

    def _pull(
        self,
        link: Link,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None,
    ) -> None:
        events: Iterator[ProviderEvent] | None = None
        try:
            events = iter(link.get().stream(messages, options, tools))
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


def chain_provider(
    chain: Sequence[ModelChoice],
    fallback: FallbackSettings,
    factory: Callable[[AISettings], Provider] = create_provider,
    *,
    opener: Callable[[ModelChoice], Provider] | None = None,
) -> FallbackProvider:
    """A ``FallbackProvider`` over ``chain`` (``pick_chain``), each model's provider made
    when it is first asked: by ``opener`` from the choice when given (a shell reuses the
    providers it has open), else by ``factory`` from its settings."""

    open_choice = opener or (lambda choice: factory(choice.ai))
    links = [Link(choice.name, partial(open_choice, choice)) for choice in chain]
    timeout = fallback.first_token_timeout_s
    return FallbackProvider(links, first_token_timeout_s=timeout, on_empty=fallback.on_empty)
