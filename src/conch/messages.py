"""Plain data types shared by every layer of conch."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
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
class ToolOutput:
    """What a tool function may return instead of text: the ``text`` the model reads and the
    ``detail`` that produced it (``ToolResult.detail``)."""

    text: str
    detail: object = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What running one tool call gave back, for the model to read (errors included), and
    ``detail``: what produced it, for front ends (the command a ``bash`` call ran, with its
    exit code), never shown to the model."""

    call_id: str
    name: str
    content: str
    is_error: bool = False
    detail: object = None

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
    ``cache_n``: how much of the prompt it evaluated and how much it reused), and the sum of
    the reply's token log-probabilities when ``GenerationOptions.logprobs`` asked for them
    and the provider gave them."""

    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    timings: dict[str, Any] | None = None
    logprob: float | None = None


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
    logprob: float | None = None  # ``Finished.logprob``


@dataclass(frozen=True, slots=True)
class GenerationOptions:
    """Per-request sampling and output constraints.

    ``grammar`` is a GBNF grammar (honoured by llama.cpp engines and servers, ignored elsewhere);
    ``json_schema`` asks for schema-constrained JSON where the provider supports it.
    ``end_bias`` is added to the logit of the model's end-of-reply token (a positive value
    ends a reply sooner once ending is likely; honoured where the provider can name that
    token: the embedded engines and llama.cpp servers). ``logprobs`` asks for the log-probability
    of each token of the reply (``Finished.logprob`` gets their sum) where the provider gives
    them: the embedded engine, llama.cpp servers, OpenAI and Azure.
    """

    temperature: float = 0.0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    grammar: str | None = None
    json_schema: dict[str, Any] | None = None
    seed: int | None = None
    end_bias: float = 0.0
    logprobs: bool = False


@dataclass(frozen=True, slots=True)
class Word:
    """One argument of a simple command after shell quoting is removed.

    ``glob`` is True when the word had an unquoted ``*``, ``?`` or ``[`` that a shell would
    expand; conch's safe-mode executor expands only those.
    """

    text: str
    glob: bool = False


class RedirectKind(StrEnum):
    """What a redirection does to its descriptor."""

    READ = "read"  # < file
    WRITE = "write"  # > file (and >| file)
    APPEND = "append"  # >> file
    DUP = "dup"  # N>&M: N becomes a copy of M


@dataclass(frozen=True, slots=True)
class Redirection:
    """One redirection of a stage, applied in order: descriptor ``fd`` (0, 1 or 2) reads or
    writes ``target`` (a file), or becomes a copy of ``source`` (for ``DUP``)."""

    fd: int
    kind: RedirectKind
    target: str | None = None
    source: int | None = None

    @property
    def writes(self) -> bool:
        """True when the redirection opens a file for writing."""
        return self.kind in (RedirectKind.WRITE, RedirectKind.APPEND)


@dataclass(frozen=True, slots=True)
class PlanStage:
    """One program of a pipeline: its words (globs not yet expanded) and its redirections."""

    words: tuple[Word, ...]
    redirects: tuple[Redirection, ...] = ()

    @property
    def name(self) -> str:
        return self.words[0].text


@dataclass(frozen=True, slots=True)
class PlanStep:
    """A pipeline and what starts it: ``""`` for the first step, then ``";"`` (always),
    ``"&&"`` (when the status so far is 0) or ``"||"`` (when it is not)."""

    connector: str
    stages: tuple[PlanStage, ...]

    @property
    def is_cd(self) -> bool:
        """A ``cd DIR`` step: the plan changes the directory of the steps after it."""
        return len(self.stages) == 1 and self.stages[0].name == "cd"


@dataclass(frozen=True, slots=True)
class Plan:
    """A command line conch can run without a shell.

    ``workspace`` is the directory its ``cd`` steps must stay in (symlinks resolved); None:
    the directory the plan starts in.
    """

    steps: tuple[PlanStep, ...]
    workspace: str | None = None

    @property
    def simple(self) -> bool:
        """One program, no pipes and no redirections: what safe mode always ran."""
        return (
            len(self.steps) == 1
            and len(self.steps[0].stages) == 1
            and not self.steps[0].stages[0].redirects
            and not self.steps[0].is_cd
        )

    @property
    def stages(self) -> tuple[PlanStage, ...]:
        return tuple(stage for step in self.steps for stage in step.stages)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form (``from_json`` reads it back)."""
        extra = {} if self.workspace is None else {"workspace": self.workspace}
        return extra | {
            "steps": [
                {
                    "connector": step.connector,
                    "stages": [
                        {
                            "words": [[w.text, w.glob] for w in stage.words],
                            "redirects": [
                                [r.fd, str(r.kind), r.target, r.source] for r in stage.redirects
                            ],
                        }
                        for stage in step.stages
                    ],
                }
                for step in self.steps
            ]
        }

    @classmethod
    def from_json(cls, data: Any) -> Plan:
        """The plan ``to_json`` wrote; KeyError, TypeError or ValueError when it is not one."""
        return cls(
            tuple(
                PlanStep(
                    str(step["connector"]),
                    tuple(
                        PlanStage(
                            tuple(Word(str(text), bool(glob)) for text, glob in stage["words"]),
                            tuple(
                                Redirection(int(fd), RedirectKind(kind), target, source)
                                for fd, kind, target, source in stage["redirects"]
                            ),
                        )
                        for stage in step["stages"]
                    ),
                )
                for step in data["steps"]
            ),
            None if data.get("workspace") is None else str(data["workspace"]),
        )
