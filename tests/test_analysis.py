"""Diagnosing the last run (--analyze): grounded in its facts, never suggesting unsafe mode."""

from __future__ import annotations

from typing import Any

import pytest

from conch.diagnose.analysis import (
    ALLOWED_TOOLS,
    ANALYSIS_MAX_TOKENS,
    NARROWER,
    SIMPLER,
    analysis_facts,
    analyze,
    drop_unsafe_advice,
    refusal_diagnosis,
)
from conch.providers.scripted import ScriptedProvider
from conch.storage.history import HistoryEntry


def entry(**fields: Any) -> HistoryEntry:
    base = {"ts": "2026-01-01T00:00:00.000000Z", "cwd": "/tmp", "argv": ["conch"], "exit_code": 0}
    return HistoryEntry(**{**base, **fields})


PIPE = (
    "Disallowed shell operator '|' in generated command: safe mode runs one program without a "
    "shell; unsafe mode allows operators and always asks first."
)
REFUSED = entry(
    exit_code=3,
    generated_command="ls | wc -l",
    request="count files",
    risk="read-only",
    decision="reject",
    notes=f"not running it: {PIPE} (conch --unsafe allows it, after asking you); {PIPE}",
)
FAILED = entry(
    exit_code=1,
    generated_command="grep -c ERROR app.log",
    request="count the errors in app.log",
    risk="read-only",
    decision="allow",
    executed=True,
)


def test_the_facts_of_a_run_are_one_a_line_with_what_the_exit_code_means() -> None:
    facts = analysis_facts(REFUSED, "the safety policy refused the command; nothing ran")
    assert facts.splitlines()[:5] == [
        "Request: count files",
        "Command: ls | wc -l",
        "Ran: no",
        "Exit code: 3 (the safety policy refused the command; nothing ran)",
        "Safety policy: reject, risk read-only",
    ]
    assert "Disallowed shell operator '|'" in facts
    assert "unsafe" not in facts.lower()


def test_the_exit_code_of_a_command_that_ran_is_explained_as_its_own() -> None:
    not_found = entry(exit_code=127, generated_command="nosuch", executed=True)
    assert "Exit code: 127 (the program was not found)" in analysis_facts(not_found, "ignored")
    killed = entry(exit_code=137, executed=True)
    assert "signal 9 (SIGKILL)" in analysis_facts(killed)


def test_a_refused_run_is_explained_from_the_policys_reasons_without_the_model() -> None:
    provider = ScriptedProvider.of()
    text = analyze(provider, REFUSED, outcome="the safety policy refused the command")
    assert provider.sent == []
    assert text.startswith("The safety policy refused `ls | wc -l`, so nothing ran.")
    assert "Disallowed shell operator '|'" in text
    assert text.count("Disallowed") == 1
    assert text.endswith(SIMPLER)
    assert "unsafe" not in text.lower()


def test_a_denylisted_command_gets_asked_narrower_and_a_whitelist_miss_the_allowed_tools() -> None:
    deny = "Denylisted: recursive delete of '~'. This is never allowed, not even in unsafe mode."
    denied = entry(
        exit_code=3,
        generated_command="rm -rf ~",
        decision="reject",
        notes=f"not running it: {deny}",
    )
    text = refusal_diagnosis(denied)
    assert text == (
        "The safety policy refused `rm -rf ~`, so nothing ran. Denylisted: recursive delete of "
        f"'~'. This is never allowed. {NARROWER}"
    )
    tools = "Disallowed command 'sed'. Allowed tools: jq"
    outside = entry(
        decision="reject", generated_command="sed 1d x", notes=f"not running it: {tools}"
    )
    assert str(refusal_diagnosis(outside)).endswith(ALLOWED_TOOLS)
    assert refusal_diagnosis(FAILED) is None


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


def test_the_models_diagnosis_is_short_grounded_and_never_suggests_unsafe_mode() -> None:
    provider = ScriptedProvider.of(
        "grep found no line with ERROR, so it exited with 1.\n"
        "Run conch --unsafe to count with a pipe instead.\n"
        "Check that app.log is the right file."
    )
    text = analyze(provider, FAILED)
    assert text == (
        "grep found no line with ERROR, so it exited with 1. Check that app.log is the right file."
    )
    sent = provider.sent[0]
    assert sent.options.max_tokens == ANALYSIS_MAX_TOKENS <= 200
    assert "Command: grep -c ERROR app.log" in sent.messages[1].content
    assert "Exit code: 1 (the command failed and reported an error)" in sent.messages[1].content


def test_a_diagnosis_that_was_only_about_unsafe_mode_falls_back_to_the_facts() -> None:
    text = analyze(ScriptedProvider.of("Use --unsafe."), FAILED)
    assert text == "The run ended with exit code 1: the command failed and reported an error."
