"""Answering questions, with the scripted provider."""

from __future__ import annotations

import pytest

from conch.command.answer import (
    ANSWER_MAX_TOKENS,
    EXAMPLES,
    answer,
    answer_events,
    split_suggestion,
)
from conch.command.request import RequestContext
from conch.errors import ModelOutputError
from conch.messages import TextDelta
from conch.policy import Decision, PolicyContext
from conch.providers.scripted import ScriptedProvider

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
    messages = provider.sent[0].messages
    system, user = messages[0], messages[-1]
    assert system.role == "system" and "Debian" in system.content
    assert [m.role for m in messages[1:-1]] == ["user", "assistant"] * len(EXAMPLES)
    assert user.content.index("No such file or directory") < user.content.index(
        "Question: what does this error mean"
    )


def test_file_samples_and_the_scope_go_with_the_question() -> None:
    provider = ScriptedProvider.of("It is YAML.")
    ctx = RequestContext(
        "what format is this", scope=".", scope_listing="app.conf\nsrc/", peek_samples=[]
    )
    ctx.peek_samples.append(("app.conf", "key: value"))
    answer(provider, ctx, PLATFORM)
    user = provider.sent[0].messages[-1].content
    assert "The start of the file app.conf:\nkey: value" in user
    assert "The current directory holds:\napp.conf\nsrc/" in user
    assert user.endswith("Question: what format is this")


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
        ("On one line: ```ls -l config.yaml```", "ls -l config.yaml"),
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


def test_an_answer_the_token_cap_cut_short_ends_at_its_last_whole_sentence() -> None:
    reply = "The file is missing. Check the path first, then look in the parent directory and"
    result = answer(ScriptedProvider.of(reply), RequestContext("q"), PLATFORM, max_tokens=10)
    assert result.text == "The file is missing."
    cut_block = "Check it with:\n```sh\nls -l conf"
    result = answer(ScriptedProvider.of(cut_block), RequestContext("q"), PLATFORM, max_tokens=3)
    assert result.text == "Check it with:"
    assert result.command is None


def test_an_empty_answer_is_a_model_error() -> None:
    with pytest.raises(ModelOutputError, match="empty answer"):
        answer(ScriptedProvider.of("  "), RequestContext("q"), PLATFORM)


def _text(event: object, seen: list[str]) -> None:
    if isinstance(event, TextDelta):
        seen.append(event.text)
