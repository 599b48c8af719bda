"""The ``agent:`` section of the config: how far the agent's turns go, what its ``bash`` tool
may take (``agent.terminal``), and whether it keeps notes and reads the web.

Flags win over these keys, and these keys over conch's defaults (``conch chat``,
``conch run``, ``conch serve`` and ``conch mcp`` read them; ``conch help config``)::

    agent:
      max_iterations: 20          # model replies per turn (unset: 10 for chat, 20 for run)
      terminal:
        timeout_seconds: 30       # a command running longer is killed, its process group too
        max_stdout_bytes: 1048576 # what is kept of its output; the rest is cut with a note
        max_stderr_bytes: 262144
      memory: true                # the memory tool, notes kept in memory_dir
      memory_dir: ~/notes/conch   # unset: memory/ in the state directory
      web: true                   # web_fetch
      search_url: http://127.0.0.1:8888/search   # web_search, through a SearXNG-style endpoint
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# The bash tool's defaults (``conch.agent.bash`` uses the same).
COMMAND_TIMEOUT_S = 30.0
MAX_STDOUT_BYTES = 1024 * 1024
MAX_STDERR_BYTES = 256 * 1024


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class TerminalSettings(_Model):
    """``agent.terminal``: the ``bash`` tool's time limit and output caps."""

    timeout_seconds: float = Field(default=COMMAND_TIMEOUT_S, gt=0)
    max_stdout_bytes: int = Field(default=MAX_STDOUT_BYTES, ge=1024)
    max_stderr_bytes: int = Field(default=MAX_STDERR_BYTES, ge=1024)


class AgentSettings(_Model):
    """``agent:``: the iteration limit, the terminal, memory and the web."""

    # None: each command's own default (10 model replies a chat turn, 20 a run task).
    max_iterations: int | None = Field(default=None, ge=1)
    terminal: TerminalSettings = Field(default_factory=TerminalSettings)
    memory: bool = False
    memory_dir: str | None = None
    web: bool = False
    search_url: str | None = None
