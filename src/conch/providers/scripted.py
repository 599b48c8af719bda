"""A provider that replays scripted replies: for tests and demos, selected through the registry."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conch.errors import ProviderError
from conch.messages import Chunk, GenerationOptions, Message, ToolCall, Usage

if TYPE_CHECKING:
    from conch.config.settings import AISettings

Reply = str | ToolCall | BaseException
ReplyFunction = Callable[[Sequence[Message], GenerationOptions], Reply]


@dataclass(slots=True)
class SentRequest:
    """What the scripted provider was asked: kept so tests can assert on prompts."""

    messages: list[Message]
    options: GenerationOptions
    tools: list[dict[str, Any]] | None


@dataclass
class ScriptedProvider:
    """Replies from a queue (strings, ``ToolCall``s, or exceptions to raise) or a function.

    Every request is recorded in ``sent``. Text replies stream in small pieces so streaming
    consumers are exercised the same way a real provider exercises them.
    """

    replies: deque[Reply] = field(default_factory=deque)
    function: ReplyFunction | None = None
    sent: list[SentRequest] = field(default_factory=list)
    name: str = "scripted"
    # ``likelihood`` answers: the score of each command under review (None: cannot score).
    scores: dict[str, float] | None = None
    scored: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, *replies: Reply) -> ScriptedProvider:
        return cls(replies=deque(replies))

    @classmethod
    def from_function(cls, function: ReplyFunction) -> ScriptedProvider:
        return cls(function=function)

    @classmethod
    def from_settings(cls, settings: AISettings) -> ScriptedProvider:
        """Replies come from ``ai.script`` in the config (a list of strings)."""
        return cls.of(*settings.script)

    def queue(self, replies: Iterable[Reply]) -> None:
        self.replies.extend(replies)

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Iterator[Chunk]:
        self.sent.append(SentRequest(list(messages), options, list(tools) if tools else None))
        if self.function is not None:
            reply = self.function(messages, options)
        elif self.replies:
            reply = self.replies.popleft()
        else:
            raise ProviderError("scripted provider has no reply left for this request")
        if isinstance(reply, BaseException):
            raise reply
        prompt_tokens = sum(len(m.content.split()) for m in messages)
        if isinstance(reply, ToolCall):
            json.loads(reply.arguments or "{}")  # a scripted call must carry valid JSON
            yield Chunk(tool_call=reply)
            yield Chunk(usage=Usage(prompt_tokens, 1), finish_reason="tool_calls")
            return
        for start in range(0, len(reply), 8):
            yield Chunk(text=reply[start : start + 8])
        yield Chunk(usage=Usage(prompt_tokens, len(reply.split())), finish_reason="stop")

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """The scripted score of the command the last message asks about (``scores``);
        a command missing from ``scores`` raises ProviderError, as a failed request would."""
        if self.scores is None:
            return None
        command = next((c for c in self.scores if f"\n{c}\n" in messages[-1].content), None)
        if command is None:
            raise ProviderError("scripted provider has no score for this command")
        self.scored.append(command)
        return self.scores[command]

    def close(self) -> None:
        return None
