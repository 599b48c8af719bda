"""Tool results as the model reads them: escapes stripped, errors marked, long output cut
with a note.

A tool's output can be far longer than a small model's whole context. ``capped`` keeps the
head and the tail of an output over the cap (the end of a command's output is where its
errors are) and says in a note how much was cut; an error result reads ``Error: ...`` so a
model cannot take it for output.

A tool that ran a command (``bash``) returns a ``conch.messages.ToolOutput``: the text the
model reads and the command's ``Ran`` as its detail. The loop takes it from there into
``ToolFinished.ran`` (the command and its exit code, for the front ends); the model reads
the text alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from conch import sanitize
from conch.messages import ToolResult

if TYPE_CHECKING:
    from conch.execute.run import Ran

DEFAULT_CAP = 6000
_HEAD_SHARE = 0.7


def ran_by(result: ToolResult) -> Ran | None:
    """The command ``result`` came from (its ``detail``), else None."""
    from conch.execute.run import Ran

    return result.detail if isinstance(result.detail, Ran) else None


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
    content = sanitize.text(result.content)
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
    return replace(result, content=content)
