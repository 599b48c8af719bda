"""What the agent streams while it works, and the errors that end a run.

One stream per turn: the provider's own events (``TextDelta`` for visible reply text,
``Stage``, ``Note``, one ``Finished`` per model reply), and the agent's: a tool call starting
and finishing, the conversation being pruned, a file the instruction asks for looked at
(``Checked``), and ``TurnFinished`` last. An instruction given one action per turn
(``conch.agent.steps``) streams its plan first (``PlanStarted``), then each step's turn
between a ``StepChanged`` to running and one to done or failed. Every front end renders the
same stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

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


@dataclass(frozen=True, slots=True)
class Checked:
    """Before an answer was accepted, the loop looked for ``what``, a file the instruction
    asks for (``conch.agent.outputs``): ``ok`` when it is there and not empty. ``detail``
    says what was found, and what the loop did about it: ``exists, 1 line``, ``is missing:
    asked the model once more``, ``is empty``."""

    what: str
    ok: bool
    detail: str


StepStatus = Literal["pending", "running", "done", "failed"]


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One step of an instruction given one action per turn: its ``number`` (from 1), its
    ``text`` (what the model is handed), how far it got, and, once failed, why
    (``detail``): its turn raised, or ended while a file it asks for was still missing."""

    number: int
    text: str
    status: StepStatus = "pending"
    detail: str = ""


@dataclass(frozen=True, slots=True)
class PlanStarted:
    """An instruction is split into ``steps`` (all pending), worked on one per turn."""

    steps: tuple[PlanStep, ...]


@dataclass(frozen=True, slots=True)
class StepChanged:
    """``step`` of the plan changed status: running as its turn starts, done or failed as
    it ends. ``of``: how many steps the plan has."""

    step: PlanStep
    of: int


AgentEvent = (
    ProviderEvent
    | ToolStarted
    | ToolFinished
    | Pruned
    | Checked
    | PlanStarted
    | StepChanged
    | TurnFinished
)


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
