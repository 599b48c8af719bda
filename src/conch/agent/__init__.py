"""The agent: a ``Session`` with a layered system prompt, built-in tools and the tool loop.

``from conch.agent import Session`` (names load on first use). Modules: ``session`` (the
entry point), ``loop`` (the agent loop), ``conversation`` (history, tokens, pruning),
``system`` (the five prompt layers), ``toolcalls`` (tool calls written as text, JSON
steps), ``builtin`` (the built-in toolset), ``bash`` and ``modes`` (commands under an execution
mode), ``evaluate`` (sandboxed Python), ``lookup`` (``tool_lookup``), ``results`` (result
caps), ``events`` (the event stream and the errors that end a turn), ``stepplan`` (an
instruction's steps as a plan), ``task`` (task files for ``conch run``). What is spliced
into the prompt passes ``conch.sanitize`` first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conch._lazy import lazy_exports

_PUBLIC = {
    "Session": "conch.agent.session",
    "native_tool_calls": "conch.agent.session",
    "Agent": "conch.agent.loop",
    "Limits": "conch.agent.loop",
    "Conversation": "conch.agent.conversation",
    "ToolOptions": "conch.agent.builtin",
    "PreambleOptions": "conch.agent.system",
    "render_system": "conch.agent.system",
    "parse_step": "conch.agent.toolcalls",
    "step_schema": "conch.agent.toolcalls",
    "AgentEvent": "conch.agent.events",
    "ToolStarted": "conch.agent.events",
    "ToolFinished": "conch.agent.events",
    "Pruned": "conch.agent.events",
    "Checked": "conch.agent.events",
    "PlanStep": "conch.agent.events",
    "PlanStarted": "conch.agent.events",
    "StepChanged": "conch.agent.events",
    "TurnFinished": "conch.agent.events",
    "AgentError": "conch.agent.events",
    "IterationLimit": "conch.agent.events",
    "LoopDetected": "conch.agent.events",
    "ExecutionMode": "conch.agent.modes",
}

__all__ = [
    "Agent",
    "AgentError",
    "AgentEvent",
    "Checked",
    "Conversation",
    "ExecutionMode",
    "IterationLimit",
    "Limits",
    "LoopDetected",
    "PlanStarted",
    "PlanStep",
    "PreambleOptions",
    "Pruned",
    "Session",
    "StepChanged",
    "ToolFinished",
    "ToolOptions",
    "ToolStarted",
    "TurnFinished",
    "native_tool_calls",
    "parse_step",
    "render_system",
    "step_schema",
]

__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC)


if TYPE_CHECKING:
    from conch.agent.builtin import ToolOptions
    from conch.agent.conversation import Conversation
    from conch.agent.events import (
        AgentError,
        AgentEvent,
        Checked,
        IterationLimit,
        LoopDetected,
        PlanStarted,
        PlanStep,
        Pruned,
        StepChanged,
        ToolFinished,
        ToolStarted,
        TurnFinished,
    )
    from conch.agent.loop import Agent, Limits
    from conch.agent.modes import ExecutionMode
    from conch.agent.session import Session, native_tool_calls
    from conch.agent.system import PreambleOptions, render_system
    from conch.agent.toolcalls import parse_step, step_schema
