"""What a ``conch shell`` session tells its front end, and what it asks.

``conch.shell.session.ShellSession.handle`` turns one input line into a stream of
``ShellEvent``s: the session's own (below), the model's events as its reply streams
(``conch.messages.ProviderEvent``: ``TextDelta``, ``Stage``, ``Note``, ``Finished``) and, in
autonomous mode, the agent's (``conch.agent.events.AgentEvent``: ``ToolStarted``,
``ToolFinished``, ``Pruned``, ``TurnFinished``). A front end renders them; the session never
prints. The only output that does not travel as an event is a command running on the user's
terminal: its pseudo-terminal copies what it prints to the stream the session was given
(``Running`` comes first, so a front end can flush what it wrote).

Where the session needs the user's word it calls the front end's ``Approve`` with a
``Question`` and gets a ``conch.execute.checked.Answer``; where the user edits a command it
calls ``Edit`` with the text to start from and gets the line the user sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from conch.agent.events import AgentEvent
from conch.messages import Usage

if TYPE_CHECKING:
    from conch.errors import ConchError
    from conch.execute.checked import Answer
    from conch.mcp.client import McpServers
    from conch.policy import Verdict
    from conch.policy.confirm import Confirmation
    from conch.shell.diffs import Change
    from conch.tools.plan import PlanItem

__all__ = [
    "Approve",
    "CommandRan",
    "CommandShown",
    "Edit",
    "FileShown",
    "Help",
    "Left",
    "Listed",
    "McpShown",
    "Output",
    "PlanChanged",
    "Question",
    "QuestionKind",
    "Running",
    "Said",
    "ScreenCleared",
    "ShellEvent",
    "TurnEnded",
    "TurnKind",
    "TurnStarted",
    "Working",
]

#: What a model turn is: a conversational reply (``ask``), a command from the one-shot
#: pipeline (``command``), or a goal for the agent (``goal``).
TurnKind = Literal["ask", "command", "goal"]

#: What the session asks about: a suggested command (run, edit or leave it), whether to send
#: a line that was no command to the model (``ask_model``), an agent's step that wants a yes
#: (``agent``), an agent's destructive or privileged step that waits for a typed yes
#: (``halt``), or whether to write a file the model proposed (``file``, after its diff).
QuestionKind = Literal["suggestion", "ask_model", "agent", "halt", "file"]


@dataclass(frozen=True, slots=True)
class Said:
    """A line from conch for the user (``conch: TEXT``); ``warning`` when it should not be
    dimmed: something failed or was refused."""

    text: str
    warning: bool = False


@dataclass(frozen=True, slots=True)
class Listed:
    """Lines a meta command shows (``:models``, ``:history``, ``:cost``, ``:config show``)."""

    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Help:
    """``:help``: the meta commands, one line each (a front end adds its own keys)."""

    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScreenCleared:
    """``:clear``: clear the screen (the conversation stays)."""


@dataclass(frozen=True, slots=True)
class Left:
    """``:quit``: the shell ends."""


@dataclass(frozen=True, slots=True)
class Working:
    """The session waits on something other than a reply's text (``checking``,
    ``correcting``, ``generating``, ``trying alternatives``...): a spinner's label."""

    label: str


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """A model turn about ``text`` begins (its events follow, then ``TurnEnded``)."""

    kind: TurnKind
    text: str


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """The turn about ``text`` ended: with the ``reply`` as kept (a command turn's is its
    ``CMD:`` line) and the tokens it used, or with the ``error`` that stopped it, or
    ``interrupted`` (Ctrl+C). A turn that did not end well leaves its question waiting: it
    joins the next one."""

    kind: TurnKind
    text: str
    reply: str = ""
    usage: Usage = field(default_factory=Usage)
    error: ConchError | None = None
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.interrupted


@dataclass(frozen=True, slots=True)
class CommandShown:
    """A command shown before it is offered or refused: a ``heading`` (``the model
    suggests:``, ``the model's correction:``, ``your edit:``), the policy's ``verdict`` and
    the ``notes`` worth showing with it (the verdict's reasons, problems, what its dry run
    saw)."""

    heading: str
    command: str
    verdict: Verdict
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Running:
    """``command`` is about to run live on the terminal (``source``: ``typed``,
    ``suggested`` or ``edited``); what it prints goes to the terminal directly."""

    command: str
    source: str


@dataclass(frozen=True, slots=True)
class CommandRan:
    """A command ran (on the terminal, or contained without a question) and how it ended."""

    command: str
    exit_code: int
    source: str
    contained: bool = False


@dataclass(frozen=True, slots=True)
class Output:
    """What a command printed that ran contained (captured, not on the terminal)."""

    stdout: str
    stderr: str


@dataclass(frozen=True, slots=True)
class FileShown:
    """A file the model proposes to write, against the disk (``conch.shell.diffs.Change``:
    the unified diff, the lines added and removed, and what stands against writing it),
    shown before the user is asked (``Question("file")``) or told why it is not written."""

    change: Change


@dataclass(frozen=True, slots=True)
class PlanChanged:
    """The agent's checklist (the ``plan`` tool) changed from ``before`` to ``after``."""

    before: tuple[PlanItem, ...]
    after: tuple[PlanItem, ...]


@dataclass(frozen=True, slots=True)
class McpShown:
    """``:mcp``: the configured MCP servers as they run (None: none is enabled)."""

    servers: McpServers | None


@dataclass(frozen=True, slots=True)
class Question:
    """What the session asks the front end. ``command`` is the command in question (for
    ``ask_model``, the line that was no command; for ``file``, the file's path);
    ``verdict`` the policy's on it; ``confirmation`` what the one rule wants (for ``agent``
    and ``halt``: its ``always`` pattern, its ``detail``); ``change`` the proposed file (for
    ``file``: yes writes it, anything else leaves the disk as it is)."""

    kind: QuestionKind
    command: str
    verdict: Verdict | None = None
    confirmation: Confirmation | None = None
    change: Change | None = None


#: The front end's answer to a ``Question``: ``Answer.run()`` (yes), ``Answer.abort()`` (no),
#: ``Answer.edit(text)`` (a suggestion only: the user edits it, starting from ``text``, through
#: ``Edit``), ``Answer.run_always(pattern)`` (an agent's step: yes, and the like of it for the
#: session). ``conch.errors.NoOneToAsk`` when there is no one to ask: the answer is no, and
#: the refusal is audited as unasked.
Approve = Callable[[Question], "Answer"]
#: The user edits a command: the text to start from in, the line the user sent out ("":
#: nothing to run). Ctrl+C raises KeyboardInterrupt, as at the prompt.
Edit = Callable[[str], str]

ShellEvent = (
    Said
    | Listed
    | Help
    | ScreenCleared
    | Left
    | Working
    | TurnStarted
    | TurnEnded
    | CommandShown
    | Running
    | CommandRan
    | Output
    | PlanChanged
    | FileShown
    | McpShown
    | AgentEvent
)
