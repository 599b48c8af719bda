"""The surfaces the fault matrix drives against a misbehaving model server: the one-shot CLI,
``conch run``, ``conch chat -p``, ``conch serve`` (the app in-process) and ``conch mcp``'s
``propose_command`` (the MCP server in-process). Each returns one ``Outcome``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from starlette.testclient import TestClient

from cliutil import CliResult, write_config
from conch.agent.builtin import ToolOptions
from conch.agent.propose import Proposer, propose_tool
from conch.config.paths import Paths
from conch.config.settings import Settings
from conch.mcp.server import build_server
from conch.providers.openai import OpenAIProvider
from conch.server.app import create_app
from conch.server.config import ServerConfig
from conch.server.models import ModelTable
from conch.storage.history import History, HistoryEntry

# Short enough that the slow faults cost a second or two each, long enough for a loaded CI box.
TIMEOUT = 1.5

CLI_SURFACES = ("oneshot", "run", "chat")
SURFACES = (*CLI_SURFACES, "serve", "mcp")

Conch = Callable[..., CliResult]


@dataclass
class Outcome:
    """How one surface ended: its exit status (CLI) or HTTP status (serve) or whether the
    tool result was an error (mcp, 1 or 0), the message the user sees, and the history entry
    it left (CLI surfaces)."""

    code: int
    message: str
    stdout: str = ""
    entry: HistoryEntry | None = None


def settings_text(url: str) -> str:
    return (
        f"ai:\n  provider: openai\n  base_url: {url}\n  model: m\n  max_retries: 0\n"
        f"  timeout: {TIMEOUT}\n  tool_calls: native\n"
        "generation:\n  dry_run: false\n  review: 1\n  candidates: 1\n"
        "validation:\n  enabled: false\n"
    )


def provider(url: str) -> OpenAIProvider:
    return OpenAIProvider(url, "m", None, TIMEOUT, 0)


def run_cli(surface: str, conch: Conch, home: Path, url: str) -> Outcome:
    write_config(home, settings_text(url))
    argv = {
        "oneshot": ("--print", "list the files here"),
        "run": ("run", "-q", "list the files here"),
        "chat": ("chat", "-p", "list the files here"),
    }[surface]
    result = conch(*argv)
    entry = History(Paths.default().state_dir).latest()
    return Outcome(result.code, result.err, result.out, entry)


def run_serve(url: str, root: Path) -> Outcome:
    tools = ToolOptions(root=root, bash=True, audit=False, evaluate=False)
    models = ModelTable({"m": lambda: provider(url)}, {"m": 4096}, {"m": "native"})
    app = create_app(ServerConfig(port=0, tools=tools, no_auth=True), models)
    body = {"model": "m", "messages": [{"role": "user", "content": "list the files here"}]}
    with TestClient(app, base_url="http://127.0.0.1") as client:
        reply = client.post("/v1/chat/completions", json=body)
        streamed = client.post("/v1/chat/completions", json={**body, "stream": True})
    data: Any = reply.json()
    message = data["error"]["message"] if "error" in data else json.dumps(data)
    # A streamed reply ends with an error event in OpenAI's shape, or with a whole reply.
    events = [line[6:] for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert events and events[-1] == "[DONE]", streamed.text[:500]
    stream_errors = [json.loads(e)["error"] for e in events[:-1] if '"error"' in e[:12]]
    if "error" in data:
        assert stream_errors, f"the stream hid the error: {streamed.text[:500]}"
        assert stream_errors[-1]["message"] == message
    return Outcome(reply.status_code, message, json.dumps(data))


def run_mcp(url: str, root: Path) -> Outcome:
    settings = Settings.model_validate(
        {
            "generation": {"dry_run": False, "review": 1, "candidates": 1},
            "validation": {"enabled": False},
        }
    )
    proposer = Proposer(settings, root, root=root, provider=lambda: provider(url), environ={})

    async def main() -> Any:
        async with Client(build_server([propose_tool(proposer)], "")) as client:
            return await client.call_tool("propose_command", {"request": "list the files here"})

    result = anyio.run(main)
    text = "\n".join(block.text for block in result.content)
    return Outcome(int(bool(result.is_error)), text)
