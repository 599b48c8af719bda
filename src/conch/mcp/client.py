"""The tools of MCP servers, for a ``Session``: ``McpServers``.

The MCP SDK is asynchronous and conch's sessions and tools are not, so the connections live on
one event loop in a background thread that ``McpServers`` owns: ``start`` connects every
enabled server at once (each within its ``connect_timeout``), a tool call from the session's
thread waits for its result (within ``timeout``), and ``close`` ends every connection (a stdio
server's stdin is closed, then it is stopped) and the thread.

Each server's tools are listed page by page (at most ``max_pages`` pages, ``MAX_TOOLS``
tools) and offered as ``conch.tools.Tool`` values named ``SERVER__TOOL``, described and
sanitized by ``conch.mcp.foreign``. The SDK negotiates the protocol version (a server of the
2026 protocol answers ``server/discover``; an older one gets the ``initialize`` handshake)
and sends the ``Accept`` header streamable HTTP asks for. Lines on a stdio server's stdout
that are not JSON-RPC are counted and skipped. A server that cannot start, or stops later, is
one line for ``on_problem`` and its tools are dropped; the others carry on. A server's stderr
goes to ``log_dir/mcp-NAME.log`` (or nowhere without a ``log_dir``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import math
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, CallToolResult, Implementation, TextContent
from mcp_types import Tool as McpTool
from pydantic import BaseModel, ConfigDict

from conch import sanitize
from conch.config.mcpservers import McpServerSettings
from conch.errors import ConchError
from conch.mcp import foreign
from conch.messages import ToolSpec
from conch.tools import Tool
from conch.version import __version__

# The SDK logs a stray stdout line with a traceback; conch counts them instead, and a library
# leaves logging to the application (this keeps Python's last-resort stderr handler quiet).
logging.getLogger("mcp").addHandler(logging.NullHandler())

MAX_TOOLS = 128
CLOSE_TIMEOUT_S = 10.0
OnProblem = Callable[[str], None]
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class McpToolError(ConchError):
    """A tool of an MCP server failed, or its server is gone (the message says which)."""


class _Arguments(BaseModel):
    """Whatever the model sends: the server checks the arguments against its own schema."""

    model_config = ConfigDict(extra="allow")


@dataclass(slots=True)
class ServerStatus:
    """One configured server as it stands: ``state`` is ``connected``, ``failed`` (it did not
    start), ``gone`` (it stopped after starting) or ``disabled``; ``tools`` pairs each offered
    name with the server's own; ``detail`` says why it failed, or what was skipped."""

    name: str
    where: str
    state: str = "starting"
    protocol: str = ""
    detail: str = ""
    tools: list[tuple[str, str]] = field(default_factory=list)
    stray_lines: int = 0


class _Connection:
    """One server's connection, run as one task on the loop from start to close."""

    def __init__(self, name: str, spec: McpServerSettings, status: ServerStatus) -> None:
        self.name, self.spec, self.status = name, spec, status
        self.client: Client | None = None
        self.listed: list[McpTool] = []
        self.instructions = ""
        self.ready = threading.Event()
        self.stop: anyio.Event | None = None
        self.errlog: TextIO | None = None

    async def run(self, environ: Mapping[str, str], log_dir: Path | None) -> None:
        self.stop = anyio.Event()
        try:
            with anyio.CancelScope(
                deadline=anyio.current_time() + self.spec.connect_timeout
            ) as scope:
                await self._serve(environ, log_dir, scope)
            if scope.cancelled_caught and self.status.state == "starting":
                self._fail(f"no answer within {self.spec.connect_timeout:g} s")
        except Exception as exc:  # any way a server can fail: it is reported, not raised
            self._fail(_describe(exc))
        finally:
            if self.errlog is not None:
                self.errlog.close()
            self.ready.set()

    async def _serve(
        self, environ: Mapping[str, str], log_dir: Path | None, scope: anyio.CancelScope
    ) -> None:
        spec = self.spec
        async with contextlib.AsyncExitStack() as stack:
            if spec.url is not None:
                headers = {k: _expand(v, environ, k) for k, v in spec.headers.items()}
                http = create_mcp_http_client(headers=headers or None)
                await stack.enter_async_context(http)
                transport: Any = streamable_http_client(spec.url, http_client=http)
            else:
                assert spec.command is not None
                params = StdioServerParameters(
                    command=spec.command,
                    args=list(spec.args),
                    env={k: _expand(v, environ, k) for k, v in spec.env.items()} or None,
                    cwd=spec.cwd,
                )
                self.errlog = _open_log(log_dir, self.name)
                transport = stdio_client(params, errlog=self.errlog)
            client = Client(
                transport,
                read_timeout_seconds=spec.timeout,
                message_handler=self._on_message,
                client_info=Implementation(name="conch", version=__version__),
                cache=None,
            )
            await stack.enter_async_context(client)
            self.listed = await self._list(client)
            self.instructions = client.instructions or ""
            self.status.protocol = client.protocol_version
            self.client = client
            scope.deadline = math.inf
            self.status.state = "connected"
            self.ready.set()
            assert self.stop is not None
            await self.stop.wait()
            self.client = None

    async def _list(self, client: Client) -> list[McpTool]:
        tools: list[McpTool] = []
        cursor: str | None = None
        for _ in range(self.spec.max_pages):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        else:
            self._note(f"read the first {self.spec.max_pages} pages of tools only (max_pages)")
        if len(tools) > MAX_TOOLS:
            self._note(f"offered the first {MAX_TOOLS} of its {len(tools)} tools")
            tools = tools[:MAX_TOOLS]
        return tools

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):  # a line on stdout that is not JSON-RPC
            self.status.stray_lines += 1

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        client = self.client
        if client is None:
            raise McpToolError(self._gone_text())
        with anyio.fail_after(self.spec.timeout):
            return await client.call_tool(tool, arguments)

    def _fail(self, why: str) -> None:
        if self.status.state == "starting":
            self.status.state, self.status.detail = "failed", why
        elif self.status.state == "connected":
            self.status.state, self.status.detail = "gone", why
        self.client = None

    def _note(self, text: str) -> None:
        self.status.detail = f"{self.status.detail}; {text}" if self.status.detail else text

    def _gone_text(self) -> str:
        why = f" ({self.status.detail})" if self.status.detail else ""
        return f"the MCP server {self.name} is no longer running{why}; its tools cannot be used"


class McpServers:
    """Connections to the MCP servers of ``servers`` (``Settings.mcp_servers``), on a thread
    of their own; see the module documentation. ``environ`` fills ``${NAME}`` in ``env`` and
    ``headers``; ``on_problem`` hears one line per server that fails or stops."""

    def __init__(
        self,
        servers: Mapping[str, McpServerSettings],
        *,
        environ: Mapping[str, str] | None = None,
        log_dir: Path | None = None,
        on_problem: OnProblem | None = None,
    ) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.log_dir = log_dir
        self.on_problem = on_problem
        self.generation = 0  # goes up whenever the tools on offer change
        # Decides each call before it is made (server, tool): raises to refuse it. The
        # agent's session sets it to the one rule for actions (``conch.policy.rules``).
        self.permit: Callable[[str, str], None] | None = None
        self.statuses: list[ServerStatus] = []
        self._connections: list[_Connection] = []
        for name, spec in servers.items():
            where = spec.url or " ".join([spec.command or "", *spec.args])
            status = ServerStatus(name, where)
            self.statuses.append(status)
            if not spec.enabled:
                status.state = "disabled"
                continue
            self._connections.append(_Connection(name, spec, status))
        self._tools: list[Tool] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: list[concurrent.futures.Future[None]] = []
        self._lock = threading.Lock()

    def start(self) -> McpServers:
        """Connect every enabled server and list its tools; returns when each one is
        connected or has failed (its ``connect_timeout`` at most)."""
        if self._loop is not None or not self._connections:
            return self
        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="conch-mcp", daemon=True)
        self._thread.start()
        for connection in self._connections:
            coroutine = connection.run(self.environ, self.log_dir)
            self._tasks.append(asyncio.run_coroutine_threadsafe(coroutine, loop))
        for connection in self._connections:
            connection.ready.wait(connection.spec.connect_timeout + 5)
        self._build()
        for connection in self._connections:
            if connection.status.state != "connected":
                if connection.status.state == "starting":  # it never answered
                    connection.status.state = "failed"
                    connection.status.detail = "no answer"
                self._report(connection, "did not start")
        return self

    @property
    def tools(self) -> list[Tool]:
        """The tools of the servers that are running, in the order of the config."""
        with self._lock:
            return list(self._tools)

    def call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> str:
        """Call ``tool`` (the server's own name) on ``server``: its text for the model.
        McpToolError when the tool reports an error or the server is gone."""
        connection = next(c for c in self._connections if c.name == server)
        if self.permit is not None:
            self.permit(server, tool)
        loop = self._loop
        if loop is None or connection.client is None:
            raise McpToolError(connection._gone_text())
        future = asyncio.run_coroutine_threadsafe(connection.call(tool, dict(arguments)), loop)
        try:
            result = future.result(timeout=connection.spec.timeout + 5)
        except McpToolError:
            raise
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:  # the server answered with an error
                raise McpToolError(f"the MCP server refused the call: {exc.message}") from None
            self._lost(connection, "its connection closed")
            raise McpToolError(connection._gone_text()) from None
        except TimeoutError:
            raise McpToolError(
                f"no answer from the MCP server {server} within {connection.spec.timeout:g} s"
            ) from None
        except Exception as exc:  # the transport failed: the server is gone
            self._lost(connection, _describe(exc))
            raise McpToolError(connection._gone_text()) from None
        text = foreign.result_text(_result_text(result))
        if result.is_error:
            raise McpToolError(text or "the tool failed and said nothing more")
        return text

    def close(self) -> None:
        """End every connection and the thread (bounded: a server that will not stop is
        killed by the SDK, and the thread is not waited on past ``CLOSE_TIMEOUT_S``)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        for connection in self._connections:
            if connection.stop is not None:
                loop.call_soon_threadsafe(connection.stop.set)
        for task in self._tasks:
            with contextlib.suppress(Exception):
                task.result(timeout=CLOSE_TIMEOUT_S)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(CLOSE_TIMEOUT_S)
        if not loop.is_running():
            loop.close()
        with self._lock:
            self._tools = []

    def __enter__(self) -> McpServers:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- inside ------------------------------------------------------------------------------

    def _build(self) -> None:
        tools: list[Tool] = []
        taken: set[str] = set()
        for connection in self._connections:
            status = connection.status
            status.tools = []
            if status.state != "connected":
                continue
            addendum = foreign.instructions(connection.name, connection.instructions)
            for listed in connection.listed:
                try:
                    parameters = foreign.schema(listed.input_schema)
                except ValueError as exc:
                    connection._note(f"skipped {sanitize.name(listed.name)}: {exc}")
                    continue
                name = foreign.tool_name(connection.name, listed.name, taken)
                taken.add(name)
                status.tools.append((name, listed.name))
                spec = ToolSpec(name, foreign.description(listed.description), parameters)
                function = partial(self._call_with, connection.name, listed.name)
                tools.append(
                    Tool(
                        spec,
                        function,
                        _Arguments,
                        trigger=foreign.trigger(listed.description, connection.name),
                        system=addendum,
                        origin=f"mcp:{connection.name}",
                    )
                )
                addendum = ""  # the server's instructions join the prompt once
        with self._lock:
            self._tools = tools
            self.generation += 1

    def _call_with(self, server: str, tool: str, **arguments: Any) -> str:
        return self.call(server, tool, arguments)

    def _lost(self, connection: _Connection, why: str) -> None:
        with self._lock:
            if connection.status.state != "connected":
                return
            connection.status.state, connection.status.detail = "gone", why
            connection.client = None
        self._build()
        self._report(connection, "stopped")

    def _report(self, connection: _Connection, what: str) -> None:
        if self.on_problem is None:
            return
        detail = connection.status.detail or "no reason given"
        where = ""
        if connection.spec.command is not None and self.log_dir is not None:
            where = f"; its stderr is in {_log_path(self.log_dir, connection.name)}"
        self.on_problem(
            f"MCP server {connection.name} {what} ({detail}); its tools are not offered{where}"
        )


def _expand(value: str, environ: Mapping[str, str], key: str) -> str:
    """``value`` with each ``${NAME}`` replaced from ``environ``; ValueError naming what is
    missing."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise ValueError(f"{key} needs ${{{name}}}, which is not set in the environment")
        return environ[name]

    return _VARIABLE.sub(one, value)


def _log_path(log_dir: Path, name: str) -> Path:
    return log_dir / f"mcp-{name}.log"


def _open_log(log_dir: Path | None, name: str) -> TextIO:
    if log_dir is None:
        return open(os.devnull, "w", encoding="utf-8")
    log_dir.mkdir(parents=True, exist_ok=True)
    return open(_log_path(log_dir, name), "a", encoding="utf-8")


def _result_text(result: CallToolResult) -> str:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        else:
            kind = getattr(block, "type", "content")
            mime = getattr(block, "mime_type", None)
            parts.append(f"[{kind}{f' ({mime})' if mime else ''} not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)


def _describe(exc: BaseException) -> str:
    """One line for what went wrong, looking inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.message
    if isinstance(exc, FileNotFoundError):
        return f"no such program: {exc.filename or exc}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
