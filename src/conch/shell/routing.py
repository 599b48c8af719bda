"""Which models answer a line of ``conch shell``, in what order.

A line for the model is a ``question`` (asked about something), a ``command`` (asked for
something done on this machine) or ``code`` (written, fixed or explained): ``task_type``
tells them apart with word patterns (``conch.command.intent.classify`` for questions and
tasks), in microseconds. ``pick_chain`` turns that into an ordered chain of configured
models: the first is the one ``shell.routing`` names first for the type (the active model
when it names none, or when the user chose one), then the rest of ``shell.routing``'s and
``shell.fallback``'s, local ones before remote ones by default, so a remote model is asked
only when the local ones fail. ``chain_provider`` makes the chain a
``conch.shell.fallback.FallbackProvider``, which tries it in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Literal, get_args
from urllib.parse import urlparse

from conch.command.intent import Intent, classify
from conch.errors import UsageError
from conch.providers.base import Provider, create_provider
from conch.shell.fallback import FallbackProvider, Link
from conch.shell.models import ModelChoice, choose_model, default_choice

if TYPE_CHECKING:
    from conch.config.settings import AISettings, Settings
    from conch.config.shell import ShellSettings

__all__ = [
    "TASK_TYPES",
    "FallbackSettings",
    "TaskType",
    "chain_provider",
    "is_local",
    "pick_chain",
    "task_type",
]

TaskType = Literal["question", "command", "code"]
TASK_TYPES: tuple[TaskType, ...] = get_args(TaskType)

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
    ``timeout`` applies); ``local_first``: after the first model of a chain, local models
    before remote ones; ``on_empty``: an empty reply counts as a failure.
    """

    routing: Mapping[TaskType, tuple[str, ...]] = field(default_factory=dict)
    fallback: tuple[str, ...] = ()
    first_token_timeout_s: float | None = None
    local_first: bool = True
    on_empty: bool = True

    @classmethod
    def from_settings(cls, shell: ShellSettings) -> FallbackSettings:
        """The settings of the ``shell`` section (validated as the config was read)."""
        return cls(
            {kind: tuple(names) for kind, names in shell.routing.items()},
            tuple(shell.fallback),
            shell.first_token_timeout_s,
            shell.local_first,
            shell.fallback_on_empty,
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
    active model with ``:model``/``--model``), then ``shell.fallback``'s. The first stays
    first (the model the line is meant for); with ``local_first`` the local models among
    the rest come before the remote ones, their order otherwise kept. UsageError for an
    unknown name."""
    head = [active] if pinned or task not in fallback.routing else []
    names = [] if head else list(fallback.routing[task])
    chain = head + [_choice(settings, name, active) for name in (*names, *fallback.fallback)]
    unique: list[ModelChoice] = []
    for choice in chain:
        if all(choice.name != seen.name for seen in unique):
            unique.append(choice)
    if not fallback.local_first:
        return unique
    first, rest = unique[:1], unique[1:]
    return first + sorted(rest, key=lambda choice: not is_local(choice.ai))


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
