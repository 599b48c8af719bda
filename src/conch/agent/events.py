"""What the agent streams while it works, and the errors that end a run.

One stream per turn: the provider's own events (``TextDelta`` for visible reply text,
``Stage``, ``Note``, one ``Finished`` per model reply), and the agent's: a tool call starting
and finishing, the conversation being pruned, and ``TurnFinished`` last. Every front end
renders the same stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conch.errors import ConchError
from conch.messages import ProviderEvent, ToolCall, ToolResult, Usage

if TYPE_CHECKING:
    from conch.execute.run import Ran


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """The agent is about to run ``call`` (in model reply number ``iteration``)."""

    call: ToolCall
    iteration: int


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """``call`` ended with ``result`` (what the model reads). ``truncated``: the output was
    longer than the cap and only part of its ``original_size`` characters was kept.

    ``ran``: the command the tool ran (the ``bash`` tool), with its exit code and output;
    None when the tool ran none (another tool, or a command that was refused or failed to
    be checked). ``command`` and ``exit_code`` read it."""

    call: ToolCall
    result: ToolResult
    truncated: bool = False
    original_size: int = 0
    duration_s: float = 0.0
    ran: Ran | None = None

    @property
    def command(self) -> str | None:
        """The command that ran (after any edit or rewrite), or None when none ran."""
        return None if self.ran is None else self.ran.command

    @property
    def exit_code(self) -> int | None:
        """The exit code of the command that ran, or None when none ran."""
        return None if self.ran is None else self.ran.exit_code


@dataclass(frozen=True, slots=True)
class Pruned:
    """Older messages were dropped to fit the context; ``summary`` is the one line that
    stands in for them."""

    dropped: int
    summary: str
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The turn is over: the visible ``reply``, how many model replies it took, and the
    tokens they used."""

    reply: str
    iterations: int
    usage: Usage = field(default_factory=Usage)


AgentEvent = ProviderEvent | ToolStarted | ToolFinished | Pruned | TurnFinished


class AgentError(ConchError):
    """The agent stopped before it had an answer. The conversation stays valid: every tool
    call has its result, and a note says why the turn ended."""


class IterationLimit(AgentError):
    """The model kept calling tools past the iteration limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the agent stopped after {limit} model replies without a final answer "
            f"(iteration limit {limit})"
        )
        self.limit = limit


class LoopDetected(AgentError):
    """The model kept repeating the same tool call after being told it would not run."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(
            f"the agent stopped: the model kept repeating the same call to {call.name} "
            "with the same arguments"
        )
        self.call = call
