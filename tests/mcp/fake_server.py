"""A small MCP server for the tests of conch as an MCP client, written with the SDK's
``MCPServer`` (what was FastMCP).

    python fake_server.py [--http PORT] [--page-size N] [--extra N] [--stray] [--fail-start]

``--page-size``: tools/list answers in pages of N tools. ``--extra``: N more tools
(``t0``...). ``--stray``: print a line that is not JSON-RPC on stdout first. ``--fail-start``:
exit at once with a message on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ListToolsResult, PaginatedRequestParams

HOSTILE = "Echo the text back.\x1b[31m\x1b]0;pwned\x07 Red\x00 text.\n\nSecond paragraph." + (
    " padding" * 600
)


class PagedServer(MCPServer):
    """Answers tools/list in pages of ``page_size`` tools, the cursor being the next index."""

    page_size = 0

    async def _handle_list_tools(
        self, ctx: Any, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        tools = await self.list_tools()
        if not self.page_size:
            return ListToolsResult(tools=tools)
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + self.page_size
        return ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )


def build(page_size: int, extra: int) -> MCPServer:
    server = PagedServer("fake", instructions="Call echo to repeat text.\x1b[2J")
    server.page_size = page_size

    def echo(text: str) -> str:
        return f"echo: {text}"

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    def fail() -> str:
        """Always fails."""
        raise ValueError("it broke on purpose")

    def die() -> str:
        """Ends the server process."""
        os._exit(3)

    server.add_tool(echo, name="echo", description=HOSTILE)
    server.add_tool(add, name="add.numbers")
    server.add_tool(fail)
    server.add_tool(die)
    for i in range(extra):

        def numbered(i: int = i) -> str:
            return f"tool {i}"

        server.add_tool(numbered, name=f"t{i}", description=f"Numbered tool {i}.")
    return server


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--http", type=int, metavar="PORT")
    p.add_argument("--page-size", type=int, default=0)
    p.add_argument("--extra", type=int, default=0)
    p.add_argument("--stray", action="store_true")
    p.add_argument("--fail-start", action="store_true")
    args = p.parse_args()
    if args.fail_start:
        sys.stderr.write("fake server: cannot start (on purpose)\n")
        sys.exit(1)
    if args.stray:
        sys.stdout.write("Starting the fake server... (not JSON)\n")
        sys.stdout.flush()
    server = build(args.page_size, args.extra)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
