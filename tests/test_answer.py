"""Answering questions and diagnosing the last run, with the scripted provider."""

from __future__ import annotations

import pytest

from conch.command.analysis import (
    ANALYSIS_MAX_TOKENS,
    analysis_facts,
    analyze,
    drop_unsafe_advice,
)
from conch.command.answer import ANSWER_MAX_TOKENS, answer, answer_events, split_suggestion
from conch.command.request import RequestContext
from conch.errors import ModelOutputError
from conch.messages import TextDelta
from conch.policy import Decision, PolicyContext
from conch.providers.scripted import ScriptedProvider
from conch.storage.history import HistoryEntry

PLATFORM = "OS: Linux 6.1 (Debian GNU/Linux 12), arch x86_64"
MISSING = (
    "The file config.yaml does not exist in the current directory, so the program cannot read "
    "it. Check the name and where you ran it from:\n```sh\nls -l config.yaml\n```"
)


def test_piped_input_comes_before_the_question_in_the_prompt() -> None:
    provider = ScriptedProvider.of(MISSING)
    ctx = RequestContext(
        "what does this error mean", stdin_text="error: No such file or directory: config.yaml"
    )
    answer(provider, ctx, PLATFORM)
    system, user = provider.sent[0].messages
    assert system.role == "system" and "Debian" in system.content
    assert user.content.index("No such file or directory") < user.content.index(
        "Question: what does this error mean"
    )


def test_an_answer_is_short_prose_and_at_most_one_command_judged_by_the_policy() -> None:
    provider = ScriptedProvider.of(MISSING)
    result = answer(provider, RequestContext("what does this error mean"), PLATFORM)
    assert provider.sent[0].options.max_tokens == ANSWER_MAX_TOKENS <= 256
    assert provider.sent[0].options.temperature == 0.0
    assert result.text.startswith("The file config.yaml does not exist")
    assert "```" not in result.text and "ls -l" not in result.text
    assert result.command == "ls -l config.yaml"
    assert result.verdict is not None and result.verdict.decision is not Decision.REJECT
    assert result.verdict.risk.value == "read-only"


def test_a_dangerous_suggestion_comes_back_rejected() -> None:
    reply = "That removes your home directory.\n```bash\nrm -rf ~\n```"
    result = answer(ScriptedProvider.of(reply), RequestContext("what would clean up"), PLATFORM)
    assert result.command == "rm -rf ~"
    assert result.verdict is not None and result.verdict.decision is Decision.REJECT


def test_the_suggestion_is_judged_in_the_callers_policy_context() -> None:
    reply = "Count them with:\n```sh\nls | wc -l\n```"
    loose = answer(
        ScriptedProvider.of(reply), RequestContext("q"), PLATFORM, PolicyContext(unsafe=True)
    )
    assert loose.verdict is not None and loose.verdict.decision is not Decision.REJECT


def test_an_answer_without_a_code_block_suggests_no_command() -> None:
    reply = "rm removes directory entries and takes options; unlink removes exactly one file."
    result = answer(ScriptedProvider.of(reply), RequestContext("rm vs unlink"), PLATFORM)
    assert result.text == reply
    assert result.command is None and result.verdict is None


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("Try:\n```\n$ df -h\n```", "df -h"),
        ("Two steps:\n```sh\ncd build\nmake\n```", None),
        ("A config file:\n```yaml\nkey: value\n```", None),
        ("First:\n```sh\nuptime\n```\nor:\n```sh\nw\n```", "uptime"),
        ("Cut off:\n```bash\nfree -h", "free -h"),
    ],
)
def test_only_a_single_command_in_the_first_shell_block_is_a_suggestion(
    reply: str, command: str | None
) -> None:
    prose, found = split_suggestion(reply)
    assert found == command
    assert "```" not in prose


def test_the_answer_streams_the_models_text_as_it_comes() -> None:
    provider = ScriptedProvider.of(MISSING)
    seen: list[str] = []
    answer(provider, RequestContext("q"), PLATFORM, on_event=lambda e: _text(e, seen))
    assert "".join(seen) == MISSING
    events = answer_events(ScriptedProvider.of("Yes."), RequestContext("q"), PLATFORM)
    assert any(isinstance(e, TextDelta) for e in events)


def test_an_empty_answer_is_a_model_error() -> None:
    with pytest.raises(ModelOutputError, match="empty answer"):
        answer(ScriptedProvider.of("  "), RequestContext("q"), PLATFORM)


def _text(event: object, seen: list[str]) -> None:
    if isinstance(event, TextDelta):
        seen.append(event.text)


REFUSED = HistoryEntry(
    ts="2026-01-01T00:00:00.000000Z",
    cwd="/tmp",
    argv=["conch", "--yes", "count files"],
    exit_code=3,
    generated_command="ls | wc -l",
    request="count files",
    risk="read-only",
    decision="reject",
    notes=(
        "not running it: Disallowed shell operator '|' in generated command: safe mode runs one "
        "program without a shell; unsafe mode allows operators and always asks first. "
        "(conch --unsafe allows it, after asking you)"
    ),
)


def test_the_facts_of_a_refused_run_carry_no_hint_about_unsafe_mode() -> None:
    facts = analysis_facts(REFUSED, "the safety policy refused the command; nothing ran")
    assert "Request: count files" in facts
    assert "Command: ls | wc -l" in facts
    assert "Ran: no" in facts
    assert "Exit code: 3 (the safety policy refused the command; nothing ran)" in facts
    assert "Safety policy: reject, risk read-only" in facts
    assert "Disallowed shell operator '|'" in facts
    assert "unsafe" not in facts.lower()


def test_the_exit_code_of_a_command_that_ran_is_explained_as_its_own() -> None:
    ran = HistoryEntry(
        ts="t", cwd="/", argv=["conch"], exit_code=127, generated_command="nosuch", executed=True
    )
    assert "Exit code: 127 (the program was not found)" in analysis_facts(ran, "ignored")
    killed = HistoryEntry(ts="t", cwd="/", argv=["conch"], exit_code=137, executed=True)
    assert "signal 9 (SIGKILL)" in analysis_facts(killed)


@pytest.mark.parametrize(
    "sentence",
    [
        "Run conch --unsafe to allow the pipe.",
        "Try again with the -u flag.",
        'You can use `conch -u "count files"` instead.',
        "Enable unsafe mode and it will run.",
        "Re-run it in unsafe mode.",
    ],
)
def test_a_sentence_suggesting_unsafe_mode_is_dropped(sentence: str) -> None:
    text = f"The policy refused the pipe. {sentence} Ask for a command without a pipe."
    assert drop_unsafe_advice(text) == (
        "The policy refused the pipe. Ask for a command without a pipe."
    )


def test_other_options_named_u_are_kept() -> None:
    text = "Use sort -u to drop the duplicate lines."
    assert drop_unsafe_advice(text) == text


def test_analyze_asks_briefly_and_never_suggests_unsafe_mode() -> None:
    provider = ScriptedProvider.of(
        "The policy refused the pipe in 'ls | wc -l'. Run conch --unsafe to allow it.\n"
        "Ask for one program instead, such as: count the entries with ls -1 --count."
    )
    text = analyze(provider, REFUSED, outcome="the safety policy refused the command")
    assert "--unsafe" not in text and "unsafe" not in text
    assert text.startswith("The policy refused the pipe")
    assert text.endswith("ls -1 --count.")
    assert provider.sent[0].options.max_tokens == ANALYSIS_MAX_TOKENS <= 200
    assert "unsafe" not in provider.sent[0].messages[1].content


def test_an_analysis_that_was_only_about_unsafe_mode_falls_back_to_the_facts() -> None:
    text = analyze(ScriptedProvider.of("Use --unsafe."), REFUSED)
    assert "safety policy refused the command" in text
    assert "Disallowed shell operator" in text
    assert "unsafe" not in text
