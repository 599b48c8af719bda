"""Plain data types shared by every layer of conch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model: its name, what it does, and its parameters' JSON schema."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> dict[str, Any]:
        """The tool in the OpenAI chat-completions ``tools`` shape."""
        function: dict[str, Any] = {"name": self.name, "parameters": self.parameters}
        if self.description:
            function["description"] = self.description
        return {"type": "function", "function": function}

    @classmethod
    def from_openai(cls, data: Any) -> ToolSpec:
        """A tool back from the OpenAI ``tools`` shape; ValueError when it is not one."""
        try:
            function = data["function"]
            name = function["name"]
            parameters = function.get("parameters") or {"type": "object", "properties": {}}
            description = function.get("description") or ""
        except (KeyError, TypeError, AttributeError):
            raise ValueError("not an OpenAI tool definition") from None
        if not isinstance(name, str) or not name or not isinstance(parameters, dict):
            raise ValueError("not an OpenAI tool definition")
        return cls(name, str(description), parameters)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A whole tool call requested by the model (fragments are reassembled by providers).

    Also one of the events a provider streams (``ProviderEvent``)."""

    id: str
    name: str
    arguments: str  # JSON text, as the model produced it


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What running one tool call gave back, for the model to read (errors included)."""

    call_id: str
    name: str
    content: str
    is_error: bool = False

    def to_message(self) -> Message:
        """The ``tool`` message that answers the call."""
        return Message("tool", self.content, tool_call_id=self.call_id, name=self.name)


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


# -- what a provider streams ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """The next piece of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class Stage:
    """What the user waits on before the reply starts: ``loading model``, ``assembling
    model`` (with ``fraction`` from 0 to 1 where it is known), ``waiting for another request``.
    """

    label: str
    fraction: float | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    """The end of a reply: token counts, why it ended (``stop``, ``length``, ``tool_calls``),
    and the engine's own timings where a llama.cpp engine reports them (``prompt_n``,
    ``cache_n``: how much of the prompt it evaluated and how much it reused)."""

    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    timings: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """Something the user should know about how the request was served (the model service
    could not start and the model ran in this process instead)."""

    text: str


# One stream of these per request: text deltas as they arrive, whole tool calls, stages and
# notes whenever they happen, and one ``Finished`` last.
ProviderEvent = TextDelta | ToolCall | Stage | Finished | Note


@dataclass(frozen=True, slots=True)
class Response:
    """A whole response, assembled from a provider's events (``complete``)."""

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
