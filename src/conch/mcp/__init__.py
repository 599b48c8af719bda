"""conch and the Model Context Protocol.

``conch.mcp.client`` (library): the tools of the MCP servers named in ``mcp_servers``, offered
to a ``Session`` with names prefixed by their server and descriptions sanitized.
``conch.mcp.foreign``: how those names and descriptions are made (no SDK needed).
``conch.mcp.server`` (front end, ``conch mcp``): conch's own tools served to MCP clients.

Nothing here is imported by ``import conch``: the MCP SDK loads only when it is used.
"""
