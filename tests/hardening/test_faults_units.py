"""The library fixes the fault matrix called for, each at the unit where it lives."""

from __future__ import annotations

import httpx
import pytest

from conch.agent.conversation import Conversation
from conch.agent.loop import Agent
from conch.errors import ModelOutputError, ProviderError
from conch.messages import GenerationOptions, Message
from conch.providers import ScriptedProvider
from conch.providers.openai import OpenAIProvider
from conch.tools import ToolRegistry
from conch.validate.extract import extract_command


def _provider(body: bytes) -> OpenAIProvider:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return OpenAIProvider(
        "http://model.test/v1", "m", None, 5, 0, transport=httpx.MockTransport(answer)
    )


def _text(provider: OpenAIProvider) -> str:
    events = provider.stream([Message("user", "hi")], GenerationOptions())
    return "".join(getattr(e, "text", "") for e in events)


CUT = b'data: {"choices": [{"delta": {"content": "rm -rf ./bu"}}]}\n\n'


def test_a_stream_cut_off_mid_reply_is_an_error_not_a_shorter_command() -> None:
    with pytest.raises(ProviderError, match="was cut off before it ended"):
        _text(_provider(CUT))


@pytest.mark.parametrize(
    "ending",
    [b"data: [DONE]\n\n", b'data: {"choices": [{"delta": {}, "finish_reason": "stop"}]}\n\n'],
)
def test_a_stream_that_ends_with_done_or_a_finish_reason_is_whole(ending: bytes) -> None:
    assert _text(_provider(CUT + ending)) == "rm -rf ./bu"


def test_the_agent_reports_an_empty_reply_instead_of_answering_nothing() -> None:
    agent = Agent(ScriptedProvider.of(""), ToolRegistry())
    with pytest.raises(ModelOutputError, match="empty reply"):
        list(agent.run(Conversation("s"), "list the files"))


@pytest.mark.parametrize(
    "reply",
    [
        "I am sorry, but I cannot tell which files you mean.",
        "Sorry, I do not know which directory you mean?",
        "I cannot do that.\nPlease give me more details.",
    ],
)
def test_a_reply_in_prose_holds_no_command(reply: str) -> None:
    with pytest.raises(ModelOutputError, match="answered in prose"):
        extract_command(reply)


@pytest.mark.parametrize(
    "reply",
    ["ls -la .", "find . -name '*.log' -size +10M", "du -sh * | sort -h", "cd .."],
)
def test_commands_that_end_like_a_sentence_are_still_commands(reply: str) -> None:
    assert extract_command(reply) == reply
