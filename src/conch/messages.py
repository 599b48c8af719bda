"""Plain data types shared by every layer of conch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A whole tool call requested by the model (fragments are reassembled by providers)."""

    id: str
    name: str
    arguments: str  # JSON text, as the model produced it


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """The message in the OpenAI chat-completions wire shape."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts reported at the end of a response."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Chunk:
    """One streamed piece of a response: a text delta, a whole tool call, or the final usage."""

    text: str = ""
    tool_call: ToolCall | None = None
    usage: Usage | None = None
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class Response:
    """A whole response, assembled from chunks."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class GenerationOptions:
    """Per-request sampling and output constraints.

    ``grammar`` is a GBNF grammar (honoured by llama.cpp engines and servers, ignored elsewhere);
    ``json_schema`` asks for schema-constrained JSON where the provider supports it.
    ``end_bias`` is added to the logit of the model's end-of-reply token (a positive value
    ends a reply sooner once ending is likely; honoured where the provider can name that
    token: the embedded engines and llama.cpp servers).
    """

    temperature: float = 0.0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    grammar: str | None = None
    json_schema: dict[str, Any] | None = None
    seed: int | None = None
    end_bias: float = 0.0


@dataclass(frozen=True, slots=True)
class Word:
    """One argument of a simple command after shell quoting is removed.

    ``glob`` is True when the word had an unquoted ``*``, ``?`` or ``[`` that a shell would
    expand; conch's safe-mode executor expands only those.
    """

    text: str
    glob: bool = False
