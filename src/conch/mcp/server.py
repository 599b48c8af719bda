"""``conch mcp``: conch's tools served to MCP clients, over stdio or streamable HTTP.

Every tool is the one the agent uses (``conch.tools.Tool``): its name, full description and
JSON schema go out in ``tools/list`` as they are, and ``tools/call`` runs it through the same
``ToolRegistry`` (arguments checked against the same model; a failure is an error result the
client's model can read). Calls run one at a time on a worker thread. The server's
instructions are the front end's to give (``conch.agent.system.mcp_instructions``: the
write/edit policy and what the execution mode runs).

Over stdio, stdout carries protocol messages only: the SDK points file descriptor 1 at stderr
while it serves, so a stray print or a child process cannot corrupt the stream. Over HTTP,
every request must carry the key (the user's, or a token ``conch mcp`` made and printed) as
``Authorization: Bearer KEY`` or ``X-API-Key: KEY``, checked by ``conch.host.auth``; only
``--no-auth`` on loopback serves without one.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.to_thread
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)
from mcp_types import Tool as McpTool

from conch.host.auth import RequireToken, check_access, is_loopback, loopback_names
from conch.messages import ToolCall
from conch.tools import Tool, ToolRegistry
from conch.version import __version__

MCP_PATH = "/mcp"


def to_mcp(tool: Tool) -> McpTool:
    """``tool`` as ``tools/list`` describes it: name, full description, JSON schema."""
    return McpTool(
        name=tool.name,
        title=tool.trigger or None,
        description=tool.spec.description,
        input_schema=tool.spec.parameters,
    )


def build_server(tools: Sequence[Tool], instructions: str) -> Server[Any]:
    """The MCP server offering ``tools``."""
    registry = ToolRegistry(tools)
    listed = [to_mcp(t) for t in tools]
    one_at_a_time = threading.Lock()
    calls = iter(range(1, 1 << 62))

    def run(call: ToolCall) -> CallToolResult:
        with one_at_a_time:
            result = registry.call(call)
        return CallToolResult(
            content=[TextContent(type="text", text=result.content)], is_error=result.is_error
        )

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        arguments = json.dumps(params.arguments or {})
        call = ToolCall(f"mcp-{next(calls)}", params.name, arguments)
        return await anyio.to_thread.run_sync(run, call)

    return Server(
        "conch",
        version=__version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(server: Server[Any]) -> None:
    """Serve MCP on stdin and stdout until the client closes stdin."""

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port); OSError when it cannot."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def serve_http(
    server: Server[Any],
    sock: socket.socket,
    host: str,
    api_key: str | None,
    *,
    give: str = "--api-key-env",
) -> None:
    """Serve MCP over streamable HTTP at ``/mcp`` on the bound ``sock`` until Ctrl+C. Every
    request must carry ``api_key``; None serves without one, allowed on loopback only
    (UsageError otherwise, saying how to ``give`` a key)."""
    import uvicorn

    check_access(host, api_key, no_auth=api_key is None, give=give)
    app: Any = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host, transport_security=_security(host)
    )
    if api_key:
        app = RequireToken(app, api_key)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def _security(host: str) -> TransportSecuritySettings:
    """On loopback, requests must name this machine in ``Host`` and ``Origin``; elsewhere the
    key alone guards the server."""
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = loopback_names(host)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in names],
        allowed_origins=[f"http://{n}:*" for n in names],
    )
