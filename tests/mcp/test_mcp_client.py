"""conch as an MCP client: the tools of a small server written with the SDK (fake_server.py)
join a ``Session``, over stdio and over streamable HTTP; a paginated listing is followed, a
stray line on stdout is skipped, and a server that fails or dies is reported and dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS
from mcputil import fake_server, free_port, listening

from conch.agent.builtin import ToolOptions
from conch.agent.session import Session
from conch.config.settings import McpServerSettings
from conch.mcp.client import McpServers
from conch.messages import ToolCall
from conch.policy.rules import Permission, Permissions
from conch.providers import ScriptedProvider


def _stdio(*flags: str, **options: object) -> McpServerSettings:
    command, *args = fake_server(*flags)
    return McpServerSettings.model_validate({"command": command, "args": args, **options})


# Foreign tools are asked about, and refused with no one to ask, unless a rule allows them.
ALLOW_ALL = ToolOptions(permissions=Permissions({"mcp": (("*", Permission.ALLOW),)}))


def _session(servers: McpServers, *replies: object) -> Session:
    provider = ScriptedProvider.of(*replies)  # type: ignore[arg-type]
    session = Session(provider, tools=ALLOW_ALL, tool_calls="native")
    return session.with_default_tools(False).with_mcp(servers)


def test_a_foreign_tool_no_rule_allows_is_refused_with_no_one_to_ask(tmp_path: Path) -> None:
    with McpServers({"fake": _stdio()}, log_dir=tmp_path) as servers:
        provider = ScriptedProvider.of(  # type: ignore[arg-type]
            ToolCall("c1", "fake__echo", '{"text": "hi"}'), "not run", "not run"
        )
        session = Session(provider, tool_calls="native").with_default_tools(False)
        session.with_mcp(servers)
        session.chat("echo hi")
        [result] = [m.content for m in session.history if m.role == "tool"]
        assert "no one can be asked" in result and "echo: hi" not in result


def test_a_paginated_listing_is_followed_and_a_stray_line_skipped(tmp_path: Path) -> None:
    spec = _stdio("--stray", "--page-size", "3", "--extra", "5")
    with McpServers({"fake": spec}, log_dir=tmp_path) as servers:
        [status] = servers.statuses
        assert status.state == "connected", status.detail
        assert status.protocol in KNOWN_PROTOCOL_VERSIONS
        assert status.stray_lines == 1
        names = [t.name for t in servers.tools]
        assert names == [
            "fake__echo",
            "fake__add_numbers",
            "fake__fail",
            "fake__die",
            *(f"fake__t{i}" for i in range(5)),
        ]
        assert ("fake__add_numbers", "add.numbers") in status.tools
        assert {t.origin for t in servers.tools} == {"mcp:fake"}
        assert servers.call("fake", "t4", {}) == "tool 4"


def test_the_page_cap_stops_a_listing_and_says_so(tmp_path: Path) -> None:
    spec = _stdio("--page-size", "2", "--extra", "6", max_pages=2)
    with McpServers({"paged": spec}) as servers:
        assert len(servers.tools) == 4
        assert "first 2 pages" in servers.statuses[0].detail


def test_a_session_calls_a_foreign_tool_over_stdio(tmp_path: Path) -> None:
    with McpServers({"fake": _stdio()}, log_dir=tmp_path) as servers:
        session = _session(
            servers,
            ToolCall("c1", "fake__echo", '{"text": "hi there"}'),
            ToolCall("c2", "fake__add_numbers", '{"a": 2, "b": 40}'),
            "done",
        )
        assert session.chat("use the tools") == "done"
        results = [m.content for m in session.history if m.role == "tool"]
        assert results == ["echo: hi there", "42"]
        system = session.render_system()
        assert "MCP SERVER fake (its own words, not conch's):\nCall echo to repeat text." in system
        assert "\x1b" not in system
        assert "- fake__echo: [fake] Echo the text back. Red text." in system


def test_a_foreign_tool_error_is_a_result_the_model_reads() -> None:
    with McpServers({"fake": _stdio()}) as servers:
        # After a failed call the agent asks once more before it takes an answer.
        session = _session(servers, ToolCall("c1", "fake__fail", "{}"), "it failed", "it failed")
        assert session.chat("try it") == "it failed"
        [result] = [m for m in session.history if m.role == "tool"]
        assert "McpToolError" in result.content and "fail" in result.content


def test_a_session_uses_a_foreign_tool_over_streamable_http(tmp_path: Path) -> None:
    port = free_port()
    argv = fake_server("--http", str(port))
    with listening(argv, port, tmp_path):
        spec = McpServerSettings(url=f"http://127.0.0.1:{port}/mcp")
        with McpServers({"web": spec}) as servers:
            assert servers.statuses[0].state == "connected", servers.statuses[0].detail
            session = _session(servers, ToolCall("c1", "web__echo", '{"text": "over http"}'), "ok")
            assert session.chat("echo") == "ok"
            assert [m.content for m in session.history if m.role == "tool"] == ["echo: over http"]


def test_servers_that_cannot_start_are_one_line_each_and_the_rest_work(tmp_path: Path) -> None:
    problems: list[str] = []
    servers = McpServers(
        {
            "good": _stdio(),
            "broken": _stdio("--fail-start"),
            "missing": McpServerSettings(command=str(tmp_path / "no-such-program")),
            "secret": _stdio(env={"TOKEN": "${NOT_SET_ANYWHERE}"}),
            "off": McpServerSettings(command="whatever", enabled=False),
        },
        environ={},
        log_dir=tmp_path / "logs",
        on_problem=problems.append,
    )
    with servers:
        states = {s.name: s.state for s in servers.statuses}
        assert states == {
            "good": "connected",
            "broken": "failed",
            "missing": "failed",
            "secret": "failed",
            "off": "disabled",
        }
        assert len(problems) == 3 and all("\n" not in p for p in problems)
        assert any(
            p.startswith("MCP server missing did not start (no such program") for p in problems
        )
        assert any("${NOT_SET_ANYWHERE}, which is not set" in p for p in problems)
        broken = next(p for p in problems if "broken" in p)
        assert str(tmp_path / "logs" / "mcp-broken.log") in broken
        assert "cannot start (on purpose)" in (tmp_path / "logs" / "mcp-broken.log").read_text()
        assert {t.origin for t in servers.tools} == {"mcp:good"}


def test_a_server_that_dies_is_reported_and_its_tools_dropped_at_the_next_turn() -> None:
    problems: list[str] = []
    servers = McpServers({"fake": _stdio(), "other": _stdio()}, on_problem=problems.append)
    with servers:
        session = _session(
            servers,
            ToolCall("c1", "fake__die", "{}"),
            "the server is gone",
            "the server is gone",
            "still here",
        )
        reply = session.chat("kill it").splitlines()
        assert reply[0] == "the server is gone"
        assert reply[1].startswith("[fake__die failed: the MCP server fake is no longer running")
        [result] = [m for m in session.history if m.role == "tool"]
        assert "no longer running" in result.content
        assert problems == [
            "MCP server fake stopped (its connection closed); its tools are not offered"
        ]
        assert session.chat("and now?") == "still here"
        names = [t.name for t in session.tools]
        assert "fake__echo" not in names and "other__echo" in names
        assert "fake__echo" not in session.render_system()
        assert servers.call("other", "echo", {"text": "x"}) == "echo: x"


def test_closing_the_session_closes_its_servers() -> None:
    servers = McpServers({"fake": _stdio()}).start()
    session = _session(servers, "hi")
    assert session.chat("hello") == "hi"
    session.close()
    assert servers.tools == []
    with pytest.raises(Exception, match="no longer running"):
        servers.call("fake", "echo", {"text": "x"})
