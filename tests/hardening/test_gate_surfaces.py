"""Every surface goes through the same gate: a model that proposes a denylisted command gets
nothing run, whatever the mode.

Canary design: the proposed commands delete the home directory, and HOME is the test's own
temporary directory (tests/conftest.py's isolated_dirs) holding a canary file. Were the gate
broken, only that temporary directory could go; each test checks HOME is inside tmp_path
before anything is proposed, and that the canary is still there afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from gateutil import DENYLISTED, assert_refusal_audited
from starlette.testclient import TestClient

from cliutil import CliResult, write_config
from conch.agent.bash import CommandRefused, Shell
from conch.agent.builtin import ToolOptions
from conch.messages import ToolCall
from conch.policy import ExecutionMode
from conch.providers.scripted import ScriptedProvider
from conch.server.app import create_app
from conch.server.config import ServerConfig
from conch.server.models import ModelTable

Conch = Callable[..., CliResult]


@pytest.mark.parametrize("command", DENYLISTED)
def test_one_shot_refuses_even_with_unsafe_and_yes(
    conch: Conch, isolated_dirs: Path, canary: Path, command: str
) -> None:
    write_config(
        isolated_dirs,
        "generation:\n  dry_run: false\nvalidation:\n  enabled: false\n"
        f"ai:\n  provider: scripted\n  script:\n    - {json.dumps(command)}\n",
    )
    result = conch("--unsafe", "--yes", "tidy up my home directory", cwd=canary.parent)
    assert result.code == 3, (result.out, result.err)
    assert "Denylisted" in result.err or "never allowed" in result.err
    assert canary.read_text(encoding="utf-8") == "still here\n"
    state = isolated_dirs / ".local" / "state" / "conch"
    assert_refusal_audited(state, command)  # it never ran, and the log says it was refused


@pytest.mark.parametrize("command", DENYLISTED)
@pytest.mark.parametrize("mode", list(ExecutionMode))
def test_agent_bash_tool_refuses_in_every_mode(
    canary: Path, tmp_path: Path, command: str, mode: ExecutionMode
) -> None:
    asked: list[str] = []

    def approve(cmd: str, *_: object) -> object:
        asked.append(cmd)
        raise AssertionError("a denylisted command must not be asked about")

    state = tmp_path / "state"
    shell = Shell(cwd=canary.parent, mode=mode, confirm=approve, state_dir=state)  # type: ignore[arg-type]
    with pytest.raises(CommandRefused):
        shell.run(command)
    assert asked == []
    assert canary.read_text(encoding="utf-8") == "still here\n"
    assert_refusal_audited(state, command)


@pytest.mark.parametrize("command", DENYLISTED[:4])
def test_the_servers_tool_loop_refuses_in_full_autonomous_mode(
    canary: Path, tmp_path: Path, command: str
) -> None:
    tools = ToolOptions(
        root=canary.parent,
        bash=True,
        mode=ExecutionMode.FULL,
        state_dir=tmp_path / "state",
        evaluate=False,
    )
    config = replace(ServerConfig(port=0, tools=tools, no_auth=True))
    provider = ScriptedProvider.of(
        ToolCall("c1", "bash", json.dumps({"command": command})), "Done."
    )
    app = create_app(config, ModelTable.of({"test-model": provider}))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        body = client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "wipe my home"}]},
        ).json()
    [call] = body["conch"]["tool_calls"]
    assert call["result"]["is_error"]
    assert "Denylisted" in call["result"]["content"] or "never" in call["result"]["content"]
    assert canary.read_text(encoding="utf-8") == "still here\n"
    assert_refusal_audited(tmp_path / "state", command)
