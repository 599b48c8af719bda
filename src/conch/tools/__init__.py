"""Tools the model can call, as values: ``@tool`` on a typed function, and a registry.

Not to be confused with a prompt config's ``tools`` list, which names the programs a generated
command may use (``conch.config.settings.AllowedProgram``).
"""

from conch.tools.tool import Tool, ToolRegistry, make_tool, tool

__all__ = ["Tool", "ToolRegistry", "make_tool", "tool"]
