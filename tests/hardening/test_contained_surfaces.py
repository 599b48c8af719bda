"""Every surface: no secret reaches a command, and a wrong verdict is still harmless.

Two properties, checked on the one-shot CLI, ``conch run``, ``conch serve`` (the app
in-process) and ``conch mcp`` (the server in-process, through the official SDK's client):

* Canary ``*_API_KEY``/``*_TOKEN``/``*_SECRET*`` values in conch's environment never reach a
  command: not one a person approved, not one that ran contained.
* The classifier is forced to call every program read-only (``conch.policy.classify``
  replaced for the test). A command that writes then runs without a question, and the
  sandbox still refuses the write: the marker file is not made.

Payloads only print the environment or make a marker file in the test's own directory; the
``canary`` file in the temporary HOME must stay as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from starlette.testclient import TestClient

import conch.policy
from cliutil import CliResult, step, write_config
from conch.agent.builtin import ToolOptions, default_tools
from conch.mcp.server import build_server
from conch.messages import ToolCall
from conch.policy import ExecutionMode, Risk
from conch.providers.scripted import ScriptedProvider
from conch.server.app import create_app
from conch.server.config import ServerConfig
from conch.server.models import ModelTable
from requires import needs

Conch = Callable[..., CliResult]
SECRETS = {
    "OPENAI_API_KEY": "sk-canary-openai-0001",
    "GITHUB_TOKEN": "ghp_canary0002",
    "AWS_SECRET_ACCESS_KEY": "canary-aws-0003",
}
MARKER = "made-by-a-wrong-verdict.txt"
WRITE = f"touch {MARKER}"

pytestmark = needs("bubblewrap")


@pytest.fixture
def secrets_set(monkeypatch: pytest.MonkeyPatch, isolated_dirs: Path) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def wrong_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every program "only reads", whatever it does."""
    monkeypatch.setattr(conch.policy, "classify", lambda invocation: Risk.READ_ONLY)


def _no_secret(text: str) -> None:
    for value in SECRETS.values():
        assert value not in text


# -- the one-shot command ---------------------------------------------------------------------


def test_one_shot_an_approved_command_sees_no_secret(
    conch: Conch, isolated_dirs: Path, secrets_set: None, canary: Path, capfd: Any
) -> None:
    write_config(
        isolated_dirs,
        "generation:\n  dry_run: false\nvalidation:\n  enabled: false\n"
        "ai:\n  provider: scripted\n  script:\n    - env\n    - env\n",
    )
    # The user answers Execute on the terminal: it runs as asked, without the secrets.
    result = conch("show my environment", cwd=canary.parent, answers="e\n")
    printed = capfd.readouterr().out + result.out
    assert result.code == 0, result.err
    assert "PATH=" in printed
    _no_secret(printed)
    # --yes is a yes nobody gave this command: it runs contained (the allowlist).
    result = conch("--yes", "show my environment", cwd=canary.parent)
    printed = capfd.readouterr().out + result.out
    assert result.code == 0, result.err
    assert "PATH=" in printed
    _no_secret(printed)


def test_one_shot_a_wrong_verdict_cannot_write_on_a_yes_given_in_advance(
    conch: Conch, isolated_dirs: Path, wrong_verdicts: None, canary: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    write_config(
        isolated_dirs,
        "generation:\n  dry_run: false\nvalidation:\n  enabled: false\n"
        f"ai:\n  provider: scripted\n  script:\n    - {json.dumps(WRITE)}\n",
    )
    result = conch("--yes", "make a marker file", cwd=work)
    assert result.code != 0 and not (work / MARKER).exists(), result.err
    assert canary.read_text(encoding="utf-8") == "still here\n"


# -- conch run ---------------------------------------------------------------------------------


def _run(conch: Conch, home: Path, work: Path, command: str, *flags: str) -> CliResult:
    write_config(
        home,
        "ai:\n  provider: scripted\n  tool_calls: json\n  script: "
        + json.dumps([step("bash", command=command), "Done."])
        + "\n",
    )
    return conch("run", *flags, "--sandbox", str(work), "do it", cwd=work)


def test_run_a_contained_command_sees_no_secret(
    conch: Conch, isolated_dirs: Path, secrets_set: None, canary: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    result = _run(conch, isolated_dirs, work, "env > seen.txt", "--allow-dangerous", "--no-act")
    assert result.code == 0, result.err
    seen = (work / "seen.txt").read_text(encoding="utf-8")
    assert "PATH=" in seen
    _no_secret(seen)
    assert canary.read_text(encoding="utf-8") == "still here\n"


def test_run_a_wrong_verdict_cannot_write(
    conch: Conch, isolated_dirs: Path, wrong_verdicts: None, canary: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    result = _run(conch, isolated_dirs, work, WRITE, "--allow-bash", "--no-act")
    assert result.code == 0, result.err  # it ran, without a question, and failed to write
    assert "touch" in result.err and not (work / MARKER).exists()
    assert canary.read_text(encoding="utf-8") == "still here\n"


# -- conch serve ---------------------------------------------------------------------------------


def _serve(root: Path, command: str, mode: ExecutionMode) -> dict[str, Any]:
    tools = ToolOptions(root=root, bash=True, mode=mode, audit=False, evaluate=False)
    provider = ScriptedProvider.of(ToolCall("c1", "bash", json.dumps({"command": command})), "ok")
    app = create_app(
        ServerConfig(port=0, tools=tools, no_auth=True), ModelTable.of({"m": provider})
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "do it"}]}
    with TestClient(app, base_url="http://127.0.0.1") as client:
        data: dict[str, Any] = client.post("/v1/chat/completions", json=body).json()
    [call] = data["conch"]["tool_calls"]
    result: dict[str, Any] = call["result"]
    return result


def test_serve_a_command_sees_no_secret(secrets_set: None, canary: Path) -> None:
    result = _serve(canary.parent, "env", ExecutionMode.RESTRICTED)
    assert "PATH=" in result["content"]
    _no_secret(result["content"])


def test_serve_a_wrong_verdict_cannot_write(wrong_verdicts: None, canary: Path) -> None:
    result = _serve(canary.parent, WRITE, ExecutionMode.RESTRICTED)
    assert not (canary.parent / MARKER).exists()
    assert "Read-only file system" in result["content"]
    assert canary.read_text(encoding="utf-8") == "still here\n"


# -- conch mcp -----------------------------------------------------------------------------------


def _mcp(root: Path, command: str) -> str:
    tools = default_tools(ToolOptions(root=root, bash=True, audit=False, evaluate=False))

    async def main() -> Any:
        async with Client(build_server(tools, "")) as client:
            return await client.call_tool("bash", {"command": command})

    result = anyio.run(main)
    return "\n".join(block.text for block in result.content)


def test_mcp_a_command_sees_no_secret(secrets_set: None, canary: Path) -> None:
    text = _mcp(canary.parent, "env")
    assert "PATH=" in text
    _no_secret(text)


def test_mcp_a_wrong_verdict_cannot_write(wrong_verdicts: None, canary: Path) -> None:
    text = _mcp(canary.parent, WRITE)
    assert not (canary.parent / MARKER).exists()
    assert "Read-only file system" in text
    assert canary.read_text(encoding="utf-8") == "still here\n"
