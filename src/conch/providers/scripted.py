"""A provider that replays scripted replies: for tests and demos, selected through the registry."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conch.errors import ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    ProviderEvent,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from conch.config.settings import AISettings

# One reply: text, a tool call, several tool calls (text first, if any), or an error to raise.
Reply = str | ToolCall | Sequence[str | ToolCall] | BaseException
ReplyFunction = Callable[[Sequence[Message], GenerationOptions], Reply]


@dataclass(slots=True)
class SentRequest:
    """What the scripted provider was asked: kept so tests can assert on prompts and tools."""

    messages: list[Message]
    options: GenerationOptions
    tools: list[ToolSpec] | None


@dataclass
class ScriptedProvider:
    """Replies from a queue or a function; every request is recorded in ``sent``.

    A reply is a string, a ``ToolCall``, a list of strings and ``ToolCall``s (one turn that
    says something and calls tools), or an exception to raise. Text streams in small pieces so
    streaming consumers are exercised the way a real provider exercises them.
    """

    replies: deque[Reply] = field(default_factory=deque)
    function: ReplyFunction | None = None
    sent: list[SentRequest] = field(default_factory=list)
    name: str = "scripted"
    # ``likelihood`` answers: the score of each command under review (None: cannot score).
    scores: dict[str, float] | None = None
    scored: list[str] = field(default_factory=list)
    # The log-probability each reply ends with when ``options.logprobs`` asks (by reply text).
    logprobs: dict[str, float] | None = None

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
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        self.sent.append(SentRequest(list(messages), options, list(tools) if tools else None))
        if self.function is not None:
            reply = self.function(messages, options)
        elif self.replies:
            reply = self.replies.popleft()
        else:
            raise ProviderError("scripted provider has no reply left for this request")
        if isinstance(reply, BaseException):
            raise reply
        parts = [reply] if isinstance(reply, str | ToolCall) else list(reply)
        calls = [p for p in parts if isinstance(p, ToolCall)]
        offered = {t.name for t in tools or ()}
        for call in calls:
            json.loads(call.arguments or "{}")  # a scripted call must carry valid JSON
            if tools is not None and call.name not in offered:
                raise ProviderError(f"scripted tool call '{call.name}' names no offered tool")
        text = "".join(p for p in parts if isinstance(p, str))
        for start in range(0, len(text), 8):
            yield TextDelta(text[start : start + 8])
        yield from calls
        prompt_tokens = sum(len(m.content.split()) for m in messages)
        completion = len(text.split()) + len(calls)
        finish = "tool_calls" if calls else "stop"
        logprob = (self.logprobs or {}).get(text) if options.logprobs else None
        yield Finished(Usage(prompt_tokens, completion), finish, logprob=logprob)

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
