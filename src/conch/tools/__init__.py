"""Tools the model can call, as values: ``@tool`` on a typed function, and a registry; and
the built-in tools that need only the filesystem or the network (imported on first use).

Not to be confused with a prompt config's ``tools`` list, which names the programs a generated
command may use (``conch.config.settings.AllowedProgram``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conch._lazy import lazy_exports
from conch.tools.tool import Tool, ToolRegistry, make_tool, tool

_BUILT_IN = {
    "Confined": "conch.tools.paths",
    "PathOutsideSandbox": "conch.tools.paths",
    "PlanItem": "conch.tools.plan",
    "PlanState": "conch.tools.plan",
    "SearchBackend": "conch.tools.web",
    "SearchHit": "conch.tools.web",
    "SearxngSearch": "conch.tools.web",
    "datetime_tool": "conch.tools.clock",
    "fs_tools": "conch.tools.fs",
    "memory_tool": "conch.tools.memory",
    "memory_vocabulary": "conch.tools.memory",
    "plan_tool": "conch.tools.plan",
    "web_tools": "conch.tools.web",
}

__all__ = [
    "Confined",
    "PathOutsideSandbox",
    "PlanItem",
    "PlanState",
    "SearchBackend",
    "SearchHit",
    "SearxngSearch",
    "Tool",
    "ToolRegistry",
    "datetime_tool",
    "fs_tools",
    "make_tool",
    "memory_tool",
    "memory_vocabulary",
    "plan_tool",
    "tool",
    "web_tools",
]

__getattr__, __dir__ = lazy_exports(__name__, _BUILT_IN)


if TYPE_CHECKING:
    from conch.tools.clock import datetime_tool
    from conch.tools.fs import fs_tools
    from conch.tools.memory import memory_tool, memory_vocabulary
    from conch.tools.paths import Confined, PathOutsideSandbox
    from conch.tools.plan import PlanItem, PlanState, plan_tool
    from conch.tools.web import SearchBackend, SearchHit, SearxngSearch, web_tools
