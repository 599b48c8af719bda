"""``tool_lookup``: the tools' index and manuals, from the same ``Tool`` values the model is
offered.

Without a name it lists every tool with its short trigger (cheap to read); with a name it
gives the full description and the parameter schema of that tool, or of every tool whose
name contains the text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from conch import sanitize
from conch.agent.system import LOOKUP_TOOL, schema_text, trigger_of
from conch.tools import Tool, make_tool

LOOKUP_DESCRIPTION = """\
Show the available tools, or the full manual of one.

Without a name: a numbered list of every tool with one line on when to use it. With a
name: that tool's full description and its parameters (as a JSON schema); a part of a
name shows every tool whose name contains it.

Args:
    name: the tool (or part of its name) to show the manual of; empty for the list.
"""


def index(tools: Sequence[Tool]) -> str:
    """The numbered list: ``1. name: trigger``."""
    lines = [
        f"{n}. {sanitize.name(t.name)}: {sanitize.one_line(trigger_of(t))}"
        for n, t in enumerate(tools, start=1)
    ]
    return "\n".join(lines) if lines else "(no tools)"


def manual(tools: Sequence[Tool], name: str) -> str:
    """The full description and schema of the tool called ``name``, or of every tool whose
    name contains it (ignoring case)."""
    wanted = name.strip().lower()
    exact = [t for t in tools if t.name.lower() == wanted]
    found = exact or [t for t in tools if wanted in t.name.lower()]
    if not found:
        known = ", ".join(t.name for t in tools) or "none"
        return f"No tool matches {name!r}. Tools: {known}"
    pages = [
        f"## {sanitize.name(t.name)}\n{sanitize.paragraph(t.spec.description)}\n\n"
        f"Parameters (JSON schema):\n{schema_text(t)}"
        for t in found
    ]
    return "\n\n".join(pages)


def lookup_tool(tools: Callable[[], Sequence[Tool]]) -> Tool:
    """The ``tool_lookup`` tool over whatever ``tools()`` returns when it is called (so a
    tool added later is found too)."""

    def tool_lookup(name: str = "") -> str:
        current = tools()
        return manual(current, name) if name.strip() else index(current)

    return make_tool(
        tool_lookup,
        name=LOOKUP_TOOL,
        description=LOOKUP_DESCRIPTION,
        trigger="List the tools, or show one tool's full manual (name=...).",
    )
