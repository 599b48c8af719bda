"""The ``shell:`` section of the config: ``conch shell`` (``conch help shell``).

Its keys, with their defaults, are listed in ``conch help config`` and docs/shell.md: the
window the model is sent (``max_turns``, ``token_budget``), what happens to suggestions
(``confirm_cmd``, ``append_history``), prices for ``:cost``, the memory of sessions, the
models by task type and the fallback chain, highlighted code, the project's tree, proposed
files, and the plan of an ``:auto`` goal.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PriceSettings", "ShellSettings"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class PriceSettings(_Model):
    """What one model costs per million tokens (``conch shell``'s ``:cost``)."""

    input_per_million: float = Field(default=0.0, ge=0)
    output_per_million: float = Field(default=0.0, ge=0)


class ShellSettings(_Model):
    """``conch shell``, the hybrid shell (``conch help shell``)."""

    model: str | None = None  # the models entry it starts with (None: the ai section)
    append_history: bool = False  # accepted suggestions go to your shell's history file
    confirm_cmd: bool = True  # False: read-only suggestions run without a question
    max_turns: int = Field(default=40, ge=2)
    token_budget: int = Field(default=4096, ge=64)
    capture_output: bool = True  # what your commands print reaches the next model turn
    prices: dict[str, PriceSettings] = Field(default_factory=dict)  # by model name
    cost_warning: float | None = Field(default=None, gt=0)  # warn once past this session cost
    # Memory: a summary of the session at :quit and :save, the recent ones at the start.
    memory: bool = True
    memory_recent: int = Field(default=3, ge=0)  # summaries a new session starts with
    memory_keep: int = Field(default=200, ge=1)  # summaries kept
    summarize_evicted: bool = True  # what the window lets go is summarized, not dropped
    # Models by task type (question, command, code) and the fallback chain (empty: off).
    routing: dict[Literal["question", "command", "code"], list[str]] = Field(default_factory=dict)
    fallback: list[str] = Field(default_factory=list)
    first_token_timeout_s: float | None = Field(default=None, gt=0)
    local_first: bool = True
    fallback_on_empty: bool = True
    highlight: bool = True  # code blocks coloured (on a terminal, without NO_COLOR)
    # A short tree of the working directory in the model's context.
    project_context: bool = True
    project_depth: int = Field(default=2, ge=1)
    project_entries: int = Field(default=60, ge=1)
    project_max_bytes: int = Field(default=2000, ge=200)
    propose_files: bool = True  # FILE: proposals shown as diffs, written after a yes
    # :auto plans first, then steps: true on the active model (or ``planner``); the default
    # (None) plans only when a planner model is named, since on the embedded model a plan is
    # one more model call per goal that has not been measured to help.
    preplan: bool | None = None
    planner: str | None = None
    plan_steps: int = Field(default=8, ge=1, le=8)
