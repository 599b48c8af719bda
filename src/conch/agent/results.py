"""Tool results as the model reads them: escapes stripped, errors marked, long output cut
with a note.

A tool's output can be far longer than a small model's whole context. ``capped`` keeps the
head and the tail of an output over the cap (the end of a command's output is where its
errors are) and says in a note how much was cut; an error result reads ``Error: ...`` so a
model cannot take it for output.

A tool that ran a command (``bash``) returns a ``CommandOutput``: the text the model reads,
which also holds the command's ``Ran``. The loop takes it from there into
``ToolFinished.ran`` (the command and its exit code, for the front ends); what the model
reads is the plain text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from conch import sanitize
from conch.messages import ToolResult

if TYPE_CHECKING:
    from conch.execute.run import Ran

DEFAULT_CAP = 6000
_HEAD_SHARE = 0.7


class CommandOutput(str):
    """A tool's text that came from running a command: a ``str`` (what the model reads, as
    ``ToolRegistry.call`` passes a tool's text on unchanged) that also holds ``ran``, the
    command that ran and how it ended."""

    ran: Ran

    def __new__(cls, text: str, ran: Ran) -> CommandOutput:
        made = super().__new__(cls, text)
        made.ran = ran
        return made


def ran_by(result: ToolResult) -> Ran | None:
    """The command ``result`` came from (its content a ``CommandOutput``), else None."""
    content = result.content
    return content.ran if isinstance(content, CommandOutput) else None


@dataclass(frozen=True, slots=True)
class Capped:
    """A result fit for the model, whether it was cut, and its size before."""

    result: ToolResult
    truncated: bool
    original_size: int


def capped(result: ToolResult, cap: int = DEFAULT_CAP) -> Capped:
    """``result`` with ``Error:`` in front of an error, its terminal escape sequences,
    invisible and bidirectional characters and control characters removed
    (``conch.sanitize.text``: the model and the terminal see the same text), and its content
    cut to about ``cap`` characters (the first and last parts kept, a note in between)."""
    content = sanitize.text(str(result.content))  # the text alone (not a CommandOutput)
    if result.is_error and not content.lower().startswith("error"):
        content = f"Error: {content}"
    size = len(content)
    if size <= cap:
        return Capped(_with(result, content), False, size)
    head = int(cap * _HEAD_SHARE)
    tail = max(cap - head, 0)
    note = (
        f"\n[... output truncated: {size - head - tail} of {size} characters left out; "
        "narrow the request to see the rest ...]\n"
    )
    cut = content[:head] + note + (content[-tail:] if tail else "")
    return Capped(_with(result, cut), True, size)


def _with(result: ToolResult, content: str) -> ToolResult:
    return ToolResult(result.call_id, result.name, content, result.is_error)
