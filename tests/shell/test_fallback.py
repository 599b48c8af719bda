"""Routing by task type and the fallback chain of ``conch shell``: which models a line is
tried on, in what order, and a provider that moves down the chain when a model fails, stays
silent or answers nothing, recording why."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from conch.config.settings import AISettings, Settings
from conch.config.shell import ShellSettings
from conch.errors import ConfigError, ProviderError, UsageError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    Note,
    ProviderEvent,
    Stage,
    TextDelta,
    ToolSpec,
    Usage,
)
from conch.providers.base import Provider, complete
from conch.providers.scripted import ScriptedProvider
from conch.shell.fallback import FallbackProvider, Link, NoModelAnswered
from conch.shell.models import ModelChoice, choose_model, default_choice
from conch.shell.routing import (
    FallbackSettings,
    chain_provider,
    is_local,
    pick_chain,
    task_type,
)

ASK = [Message("user", "why did make fail?")]


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("why did that fail?", "question"),
        ("what does umask mean", "question"),
        ("show me the biggest files here", "command"),
        ("how many lines are in notes.txt", "command"),
        ("write a python script that renames photos by date", "code"),
        ("fix the bug in src/app.py", "code"),
        ("explain this traceback", "code"),
        ("what is a decorator", "code"),
        ("I get KeyError: 'name' when I run it", "code"),
        ("make this faster:\n```python\nfor x in y: pass\n```", "code"),
    ],
)
def test_a_line_for_the_model_has_a_task_type(line: str, kind: str) -> None:
    assert task_type(line) == kind


def _settings() -> Settings:
    return Settings(
        ai=AISettings(provider="local"),
        models={
            "fast": AISettings(provider="local"),
            "deep": AISettings(provider="openai", base_url="http://127.0.0.1:8081/v1"),
            "cloud": AISettings(provider="openai", model="gpt-4o-mini"),
            "azure": AISettings(provider="azure"),
        },
    )


def test_local_means_this_machine() -> None:
    models = _settings().models
    assert is_local(models["fast"]) and is_local(models["deep"])
    assert not is_local(models["cloud"]) and not is_local(models["azure"])
    assert is_local(AISettings(provider="openai", base_url="http://localhost:8080/v1"))
    assert not is_local(AISettings(provider="openai", base_url="https://api.example.com/v1"))


def test_the_settings_are_the_shell_sections_typed_keys() -> None:
    shell = ShellSettings(
        routing={"code": ["deep", "cloud"], "question": ["fast"]},
        fallback=["cloud"],
        first_token_timeout_s=20,
        local_first=False,
        model="fast",  # another key of the section: not a fallback setting
    )
    read = FallbackSettings.from_settings(shell)
    assert read.routing == {"code": ("deep", "cloud"), "question": ("fast",)}
    assert read.fallback == ("cloud",) and read.first_token_timeout_s == 20.0
    assert not read.local_first and read.on_empty
    assert FallbackSettings.from_settings(ShellSettings()) == FallbackSettings()


@pytest.mark.parametrize(
    "shell",
    [
        {"routing": {"poetry": ["fast"]}},
        {"routing": ["fast"]},
        {"fallback": [1]},
        {"first_token_timeout_s": 0},
        {"fallback_on_empty": "maybe"},
    ],
)
def test_a_setting_of_the_wrong_shape_is_refused_as_the_config_is_read(
    shell: dict[str, Any],
) -> None:
    with pytest.raises(ValueError, match="shell"):
        Settings.model_validate({"shell": shell})


def test_unknown_names_are_problems() -> None:
    fallback = FallbackSettings({"code": ("deep", "huge")}, ("nope",))
    problems = fallback.problems(_settings())
    assert len(problems) == 2
    assert "shell.routing.code huge: no such model" in problems[0]
    assert "shell.fallback nope" in problems[1]


def _names(chain: Sequence[ModelChoice]) -> list[str]:
    return [choice.name for choice in chain]


def test_the_chain_is_the_routed_models_then_the_fallback_local_first() -> None:
    settings = _settings()
    fast = choose_model(settings, "fast")
    fallback = FallbackSettings({"code": ("cloud", "deep", "azure")}, ("cloud", "fast"))
    # The routed head stays first; local models first among the rest.
    chain = pick_chain("code", settings, fast, fallback)
    assert _names(chain) == ["cloud", "deep", "fast", "azure"]
    # No routing for questions: the active model, then the fallback.
    assert _names(pick_chain("question", settings, fast, fallback)) == ["fast", "cloud"]
    ordered = FallbackSettings({"code": ("azure", "deep")}, ("fast",), local_first=False)
    assert _names(pick_chain("code", settings, fast, ordered)) == ["azure", "deep", "fast"]


def test_a_local_fallback_never_goes_ahead_of_the_active_model() -> None:
    settings = _settings()
    cloud = choose_model(settings, "cloud")
    fallback = FallbackSettings(fallback=("azure", "fast"))
    # No routing for questions: the active (remote) model first, then the fallback.
    assert _names(pick_chain("question", settings, cloud, fallback)) == ["cloud", "fast", "azure"]


def test_a_pinned_model_stays_first_even_when_remote() -> None:
    settings = _settings()
    cloud = choose_model(settings, "cloud")
    fallback = FallbackSettings({"code": ("deep",)}, ("fast",))
    assert _names(pick_chain("code", settings, cloud, fallback, pinned=True)) == ["cloud", "fast"]


def test_the_ai_section_is_a_model_of_the_chain_by_its_name() -> None:
    settings = _settings()
    active = default_choice(settings.ai)
    chain = pick_chain("command", settings, active, FallbackSettings(fallback=("cloud",)))
    assert _names(chain) == ["local", "cloud"]
    with pytest.raises(UsageError):
        pick_chain("command", settings, active, FallbackSettings(fallback=("nope",)))


def _chain(*providers: Provider, **options: Any) -> FallbackProvider:
    links = [Link(f"m{n}", _given(p)) for n, p in enumerate(providers)]
    return FallbackProvider(links, **options)


def _given(provider: Provider) -> Callable[[], Provider]:
    return lambda: provider


def test_the_first_model_that_answers_answers() -> None:
    first = ScriptedProvider.of("It failed because of the fixture.")
    second = ScriptedProvider.of("unused")
    chain = _chain(first, second)
    response = complete(chain, ASK)
    assert response.text == "It failed because of the fixture."
    assert chain.answered_by == "m0" and [a.outcome for a in chain.attempts] == ["answered"]
    assert chain.attempts[0].usage == response.usage
    assert second.sent == []
    assert chain.name == "m0>m1"


def test_an_error_moves_on_with_a_note_and_the_reason_recorded() -> None:
    failing = ScriptedProvider.of(ProviderError("cannot reach http://127.0.0.1:8080"))
    chain = _chain(failing, ScriptedProvider.of("The fixture path is relative."))
    events: list[ProviderEvent] = []
    response = complete(chain, ASK, on_event=events.append)
    assert response.text == "The fixture path is relative."
    notes = [e.text for e in events if isinstance(e, Note)]
    assert notes == ["m0: cannot reach http://127.0.0.1:8080; asking m1"]
    assert [(a.model, a.outcome) for a in chain.attempts] == [("m0", "error"), ("m1", "answered")]
    assert "cannot reach" in chain.attempts[0].detail
    assert "m0: error (cannot reach" in chain.attempts[0].line


def test_a_provider_that_cannot_be_made_moves_on_too() -> None:
    def broken() -> Provider:
        raise ConfigError("ai.model_path: no such file")

    second = ScriptedProvider.of("answer")
    chain = FallbackProvider([Link("local", broken), Link("cloud", lambda: second)])
    assert complete(chain, ASK).text == "answer"
    assert chain.attempts[0].outcome == "error"


def test_an_empty_reply_moves_on_but_the_last_models_empty_reply_stands() -> None:
    chain = _chain(ScriptedProvider.of(""), ScriptedProvider.of("text"))
    assert complete(chain, ASK).text == "text"
    assert chain.attempts[0].outcome == "empty"
    last = _chain(ScriptedProvider.of(""))
    assert complete(last, ASK).text == "" and last.answered_by == "m0"
    kept = _chain(ScriptedProvider.of(""), ScriptedProvider.of("text"), on_empty=False)
    assert complete(kept, ASK).text == "" and kept.answered_by == "m0"


def test_the_last_models_error_is_raised_as_it_is() -> None:
    chain = _chain(
        ScriptedProvider.of(ProviderError("first down")),
        ScriptedProvider.of(ProviderError("second down")),
    )
    with pytest.raises(ProviderError, match="second down"):
        complete(chain, ASK)
    assert [a.outcome for a in chain.attempts] == ["error", "error"]
    assert chain.answered_by is None


class _Broken:
    """Starts a reply, then fails: once text was shown, no other model stands in."""

    name = "broken"

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        yield TextDelta("The fix")
        raise ProviderError("connection reset")

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        return None

    def close(self) -> None:
        return None


def test_a_failure_after_the_reply_began_is_raised() -> None:
    second = ScriptedProvider.of("unused")
    chain = _chain(_Broken(), second)
    with pytest.raises(ProviderError, match="connection reset"):
        complete(chain, ASK)
    assert second.sent == []


class _Silent:
    """Says it is loading, then says nothing until ``release`` is set."""

    name = "silent"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.closed = threading.Event()

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        try:
            yield Stage("loading model")
            self.release.wait(10)
            yield TextDelta("late")
            yield Finished(Usage(1, 1))
        finally:
            self.closed.set()

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        return None

    def close(self) -> None:
        return None


def test_a_silent_model_times_out_and_the_next_answers() -> None:
    silent = _Silent()
    chain = _chain(silent, ScriptedProvider.of("from the cloud"), first_token_timeout_s=0.2)
    events: list[ProviderEvent] = []
    response = complete(chain, ASK, on_event=events.append)
    assert response.text == "from the cloud"
    assert Stage("loading model") in events
    assert any(isinstance(e, Note) and "no reply within 0.2 s" in e.text for e in events)
    assert [a.outcome for a in chain.attempts] == ["timeout", "answered"]
    # The reply given up on is stopped at its next event.
    silent.release.set()
    assert silent.closed.wait(5)


def test_a_model_still_busy_with_a_reply_given_up_on_is_passed_over() -> None:
    silent = _Silent()
    chain = _chain(silent, ScriptedProvider.of("one", "two"), first_token_timeout_s=0.1)
    complete(chain, ASK)
    assert complete(chain, ASK).text == "two"
    assert [a.outcome for a in chain.attempts] == ["busy", "answered"]
    silent.release.set()
    assert silent.closed.wait(5)


def test_when_every_model_is_passed_over_the_error_lists_them() -> None:
    silent = _Silent()
    chain = _chain(ScriptedProvider.of(""), silent, first_token_timeout_s=0.1)
    with pytest.raises(NoModelAnswered, match="no model answered: m0: empty") as raised:
        complete(chain, ASK)
    assert [a.outcome for a in raised.value.attempts] == ["empty", "timeout"]
    silent.release.set()
    assert silent.closed.wait(5)


def test_with_a_timeout_a_reply_streams_whole_from_the_worker() -> None:
    chain = _chain(ScriptedProvider.of("a reply long enough to come in pieces"))
    chain.first_token_timeout_s = 5.0
    events: list[ProviderEvent] = []
    response = complete(chain, ASK, on_event=events.append)
    assert response.text == "a reply long enough to come in pieces"
    assert sum(isinstance(e, TextDelta) for e in events) > 1
    assert chain.answered_by == "m0"


def test_with_a_timeout_the_model_is_opened_on_the_callers_thread() -> None:
    # Opening may ask on the terminal (a missing API key): never from the worker thread.
    opened_on: list[threading.Thread] = []

    def opener() -> Provider:
        opened_on.append(threading.current_thread())
        return ScriptedProvider.of("answer")

    chain = FallbackProvider([Link("m0", opener)], first_token_timeout_s=5.0)
    assert complete(chain, ASK).text == "answer"
    assert opened_on == [threading.current_thread()]


def test_the_chain_opens_each_provider_when_first_asked_and_closes_them() -> None:
    settings = _settings()
    made: list[str] = []

    def factory(ai: AISettings) -> Provider:
        made.append(ai.provider)
        return ScriptedProvider.of("answer")

    chain = pick_chain(
        "command", settings, choose_model(settings, "fast"), FallbackSettings(fallback=("cloud",))
    )
    provider = chain_provider(chain, FallbackSettings(fallback=("cloud",)), factory)
    assert made == []
    assert complete(provider, ASK).text == "answer"
    assert made == ["local"]
    provider.close()
    with pytest.raises(ValueError):
        FallbackProvider([])


def test_the_ai_section_can_be_named_in_the_chain() -> None:
    settings = _settings()
    cloud = choose_model(settings, "cloud")
    chain = pick_chain("code", settings, cloud, FallbackSettings({"code": ("local", "cloud")}))
    assert _names(chain) == ["local", "cloud"]
    assert FallbackSettings(fallback=("local",)).problems(settings) == []
