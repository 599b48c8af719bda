"""The MCP servers of the config, for ``conch chat``, ``conch run`` and ``conch shell``:
connected when there are any, problems shown one line each, and listed by ``:mcp``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conch.config.settings import Settings
    from conch.mcp.client import McpServers


def connect_mcp(
    settings: Settings, environ: Mapping[str, str], state_dir: Path, warn: Callable[[str], None]
) -> McpServers | None:
    """The configured MCP servers, started (None when none is enabled); a server that cannot
    start is one line for ``warn`` and is left out. Its stderr goes under ``state_dir``."""
    if not any(spec.enabled for spec in settings.mcp_servers.values()):
        return None
    from conch.mcp.client import McpServers

    servers = McpServers(
        settings.mcp_servers, environ=environ, log_dir=state_dir / "mcp", on_problem=warn
    )
    return servers.start()


def mcp_lines(settings: Settings, servers: McpServers | None) -> list[str]:
    """Each configured server (state, transport, protocol) and the tools it gives, as the
    model sees them and as the server names them."""
    if not settings.mcp_servers:
        return ["no MCP servers configured (add them under mcp_servers:, see `conch help mcp`)"]
    if servers is None:
        return [f"  {name}  disabled" for name in settings.mcp_servers]
    lines: list[str] = []
    for status in servers.statuses:
        facts = [status.state]
        if status.protocol:
            facts.append(f"protocol {status.protocol}")
        if status.stray_lines:
            facts.append(f"{status.stray_lines} stray stdout lines ignored")
        if status.detail:
            facts.append(status.detail)
        lines.append(f"  {status.name}  {'; '.join(facts)}")
        lines.append(f"    {status.where}")
        for offered, own in status.tools:
            renamed = offered != f"{status.name}__{own}"
            lines.append(f"    {offered}" + (f"  (the server's {own})" if renamed else ""))
    return lines
