"""The ``permissions:`` section of the config: the user's allow / ask / deny rules per tool and
a custom denylist. ``conch.policy.rules.permissions_from`` turns it into what the one rule for
actions takes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


PermissionWord = Literal["allow", "ask", "deny"]


class PermissionSettings(_Model):
    """``permissions:``: per tool, glob patterns with allow, ask or deny (the last that
    matches wins), and ``deny``, commands refused in every mode (``conch help safety``).
    ``bash`` matches a command's text, ``write``/``delete``/``move``/``read`` a path
    relative to the working directory, ``mcp`` ``server.tool``, ``fetch`` a URL."""

    deny: list[str] = Field(default_factory=list)
    bash: dict[str, PermissionWord] = Field(default_factory=dict)
    write: dict[str, PermissionWord] = Field(default_factory=dict)
    delete: dict[str, PermissionWord] = Field(default_factory=dict)
    move: dict[str, PermissionWord] = Field(default_factory=dict)
    read: dict[str, PermissionWord] = Field(default_factory=dict)
    mcp: dict[str, PermissionWord] = Field(default_factory=dict)
    fetch: dict[str, PermissionWord] = Field(default_factory=dict)
