"""The ``mcp_servers`` section of the settings: the MCP servers whose tools conch's agent uses
(``conch.mcp.client``; ``conch help mcp``)."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["MCP_SERVER_NAME", "McpServerSettings"]


# A server's name: a word of letters, digits, ``_``, ``-`` and ``.`` (it prefixes its tools).
MCP_SERVER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$"


class McpServerSettings(BaseModel):
    """One MCP server whose tools conch sessions use (``conch help mcp``): a program to
    start and talk to over stdio (``command``, ``args``, ``env``, ``cwd``), or a streamable
    HTTP endpoint (``url``, ``headers``). ``${NAME}`` in ``env`` and ``headers`` values is
    read from conch's environment when the server is started, so secrets stay out of the
    file."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    # Seconds to start and list the tools, and for one tool call.
    connect_timeout: float = Field(default=20.0, gt=0, le=600)
    timeout: float = Field(default=120.0, gt=0, le=3600)
    # At most this many tools/list pages are read (a server that never stops paging).
    max_pages: int = Field(default=10, ge=1, le=1000)

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and not re.fullmatch(r"https?://[^\s/]+\S*", url):
            raise ValueError("not an http:// or https:// URL")
        return url

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a stdio server) or url (streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("args, env and cwd are for a stdio server (command), not a url")
        if self.command is not None and self.headers:
            raise ValueError("headers are for a streamable HTTP server (url), not a command")
        return self
