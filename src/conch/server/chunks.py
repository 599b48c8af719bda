"""What the server sends: OpenAI ``chat.completion`` bodies and ``chat.completion.chunk``s.

The extra events (server-side tool calls and results, prompt progress) travel as ordinary
chunks with an empty delta and a ``conch`` member: every OpenAI client reads an empty delta
as nothing new, so only clients that look for ``conch`` see them. (Named SSE events would
not do: the official SDKs hand those to the caller as if they were chunks.)
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from conch.messages import ToolCall, Usage
from conch.server.turn import Extra, Outcome

PROGRESS_KINDS = frozenset({"prompt_progress"})


def usage_body(usage: Usage) -> dict[str, int]:
    """Token counts in OpenAI's shape."""
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }


def tool_calls_body(calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    """The client's tool calls as a message carries them."""
    return [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for c in calls
    ]


class Reply:
    """The responses of one request: its id, model and creation time, and what it sends."""

    def __init__(
        self, model: str, *, include_usage: bool = False, events: bool = True, progress: bool = True
    ) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model = model
        self.include_usage = include_usage
        self.events = events
        self.progress = progress
        self.extras: list[Extra] = []

    # -- streaming ---------------------------------------------------------------------------

    def chunk(
        self, delta: dict[str, Any], finish_reason: str | None = None, **more: Any
    ) -> dict[str, Any]:
        """One chunk with one choice."""
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        if self.include_usage:
            body["usage"] = None
        body.update(more)
        return body

    def start(self) -> dict[str, Any]:
        """The first chunk: the assistant's role."""
        return self.chunk({"role": "assistant", "content": ""})

    def text(self, text: str) -> dict[str, Any]:
        return self.chunk({"content": text})

    def extra(self, item: Extra) -> dict[str, Any] | None:
        """The chunk of an extra event, or None when the request turned it off."""
        self.extras.append(item)
        if not self.events or (item.kind in PROGRESS_KINDS and not self.progress):
            return None
        return self.chunk({}, conch={"type": f"conch.{item.kind}", **item.data})

    def end(self, outcome: Outcome) -> list[dict[str, Any]]:
        """The last chunks: the client's tool calls (one chunk each, with its index), the
        finish reason, and the usage when the request asked for it."""
        chunks = [
            self.chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        }
                    ]
                }
            )
            for index, call in enumerate(outcome.calls)
        ]
        chunks.append(self.chunk({}, outcome.finish_reason))
        if self.include_usage:
            chunks.append(
                {
                    "id": self.id,
                    "object": "chat.completion.chunk",
                    "created": self.created,
                    "model": self.model,
                    "choices": [],
                    "usage": usage_body(outcome.usage),
                }
            )
        return chunks

    # -- whole -------------------------------------------------------------------------------

    def whole(self, outcome: Outcome) -> dict[str, Any]:
        """The ``chat.completion`` body; with events on, ``conch.tool_calls`` lists the
        server-side tool calls and their results."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": outcome.text if outcome.text or not outcome.calls else None,
        }
        if outcome.calls:
            message["tool_calls"] = tool_calls_body(outcome.calls)
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": outcome.finish_reason}],
            "usage": usage_body(outcome.usage),
        }
        if self.events:
            calls = {e.data["id"]: dict(e.data) for e in self.extras if e.kind == "tool_call"}
            for e in self.extras:
                if e.kind == "tool_result" and e.data["id"] in calls:
                    calls[e.data["id"]]["result"] = e.data
            body["conch"] = {"tool_calls": list(calls.values())}
        return body
