"""More surfaces through the same gate: ``evaluate``, ``conch shell``'s suggestions, ``:auto``
and the MCP server's ``bash`` tool. A model (or client) that asks for a denylisted command
gets nothing run, is told so, and the audit log says the command was refused.

Canary design as in test_gate_surfaces.py: the commands delete the home directory, and HOME
is the test's own temporary directory holding a canary file (the ``canary`` fixture checks
HOME is inside tmp_path before anything is proposed). ``evaluate`` runs no command through
the gate: its guard is the sandbox, so its tests check that the code's attempts fail, are
reported to the model, and that no command reached the runner.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pexpect
import pytest
from gateutil import CANARY_TEXT, DENYLISTED, assert_refusal_audited, audited
from mcp import Client, StdioServerParameters

from cliutil import plain_terminal, script, spawn_conch, step
from conch.agent import Session
from conch.agent.builtin import ToolOptions, default_tools
from conch.agent.events import AgentEvent, ToolFinished
from conch.config.paths import Paths
from conch.execute.sandbox import find_sandbox
from conch.mcp.server import build_server
from conch.messages import ToolCall
from conch.policy import ExecutionMode
from conch.providers.scripted import ScriptedProvider

PROMPT = "[conch:scripted]$"
START_S = 10
STEP_S = 5


def _home_intact(canary: Path) -> None:
    assert canary.read_text(encoding="utf-8") == CANARY_TEXT


# --- evaluate -------------------------------------------------------------------------------


def _evaluate(root: Path, state: Path, code: str) -> tuple[list[str], ToolFinished | None]:
    """The tools a session offers with ``evaluate`` on, and the result of one call of it."""
    provider = ScriptedProvider.of(ToolCall("c1", "evaluate", json.dumps({"code": code})), "ok")
    options = ToolOptions(root=root, bash=True, mode=ExecutionMode.FULL, state_dir=state)
    session = Session(provider, tools=options)
    names = [tool.name for tool in session.tools]
    events: list[AgentEvent] = []
    session.chat("tidy up my home directory", on_event=events.append)
    finished = [e for e in events if isinstance(e, ToolFinished)]
    return names, (finished[0] if finished else None)


def _attempts(home: Path, canary: Path, outside: Path) -> dict[str, str]:
    h, c, o = repr(str(home)), repr(str(canary)), repr(str(outside))
    return {
        "os.system": f"import os\nprint('status', os.system('rm -rf ' + {h}))",
        "subprocess": (
            "import subprocess\n"
            f"r = subprocess.run(['rm', '-rf', {h}], capture_output=True, text=True)\n"
            "print('returncode', r.returncode, r.stderr)"
        ),
        "shutil.rmtree": f"import shutil\nshutil.rmtree({h})",
        "open for writing": f"open({c}, 'w').write('gone')",
        "os.open outside": f"import os\nos.open({o}, os.O_WRONLY | os.O_CREAT)",
        "os.remove": f"import os\nos.remove({c})",
    }


# What the model reads back of each attempt: the sandbox's read-only filesystem, or the
# guarded ``open``'s refusal.
ATTEMPTS = {
    "os.system": "Read-only file system",
    "subprocess": "Read-only file system",
    "shutil.rmtree": "Read-only file system",
    "open for writing": "PermissionError: evaluate is read-only",
    "os.open outside": "PermissionError: evaluate is read-only",
    "os.remove": "Read-only file system",
}


@pytest.mark.parametrize("attempt", ATTEMPTS)
def test_evaluate_cannot_run_programs_or_write_outside_its_sandbox(
    canary: Path, tmp_path: Path, attempt: str
) -> None:
    home = canary.parent
    outside = tmp_path / "outside.txt"
    code = _attempts(home, canary, outside)[attempt]
    state = tmp_path / "state"

    names, finished = _evaluate(home, state, code)

    sandbox = find_sandbox()
    if not sandbox.usable:  # no sandbox: the tool is not offered at all
        assert "evaluate" not in names and finished is not None and finished.result.is_error
    else:
        assert "evaluate" in names and finished is not None
        content = finished.result.content
        # The attempt failed, and the model reads that it did.
        assert ATTEMPTS[attempt] in content, content
        assert "returncode 0" not in content and "status 0" not in content, content
    _home_intact(canary)
    assert not outside.exists()
    assert audited(state) == ""  # no command reached the runner


# --- conch shell: a suggestion and :auto ------------------------------------------------------


@pytest.fixture
def shell_in_home(canary: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[pexpect.spawn]]:
    """The ``conch shell`` processes a test starts (in HOME), closed at its end."""
    plain_terminal(monkeypatch)
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        child.close(force=True)


def _start(home: Path, children: list[pexpect.spawn]) -> pexpect.spawn:
    child = spawn_conch(home, "shell")
    children.append(child)
    child.timeout = STEP_S
    child.expect_exact(PROMPT, timeout=START_S)
    return child


def _state() -> Path:
    return Paths.default().state_dir


@pytest.mark.parametrize("command", DENYLISTED[:4])
def test_a_denylisted_suggestion_is_refused_never_offered(
    isolated_dirs: Path, canary: Path, shell_in_home: list[pexpect.spawn], command: str
) -> None:
    script(isolated_dirs, f"That frees space:\nCMD: {command}")
    shell = _start(canary.parent, shell_in_home)
    shell.send("free some space in my home\r")
    seen = shell.expect_exact(["Run it? [y]es", "not running it: "])
    assert seen == 1, "a denylisted suggestion was offered to run"
    shell.expect_exact(PROMPT)
    shell.send(":quit\r")
    shell.expect(pexpect.EOF)
    _home_intact(canary)
    assert_refusal_audited(_state(), command)


@pytest.mark.parametrize("command", DENYLISTED[:3])
def test_auto_refuses_a_denylisted_step(
    isolated_dirs: Path, canary: Path, shell_in_home: list[pexpect.spawn], command: str
) -> None:
    script(isolated_dirs, step("bash", command=command), "I left it alone.")
    shell = _start(canary.parent, shell_in_home)
    shell.send(":auto clean up my home directory\r")
    seen = shell.expect_exact(["HALT", "Run it?", "I left it alone."])
    assert seen == 2, "a denylisted step was asked about"
    shell.expect_exact("1 command of the agent's did not run")
    shell.expect_exact(PROMPT)
    shell.send(":quit\r")
    shell.expect(pexpect.EOF)
    _home_intact(canary)
    assert_refusal_audited(_state(), command)


# --- the MCP server's bash tool ---------------------------------------------------------------


def _call_bash(root: Path, state: Path, mode: ExecutionMode, command: str) -> Any:
    tools = default_tools(ToolOptions(root=root, bash=True, mode=mode, state_dir=state))

    async def main() -> Any:
        async with Client(build_server(tools, "")) as client:
            return await client.call_tool("bash", {"command": command})

    return anyio.run(main)


@pytest.mark.parametrize("command", DENYLISTED)
@pytest.mark.parametrize("mode", [ExecutionMode.RESTRICTED, ExecutionMode.FULL])
def test_mcp_bash_refuses_in_every_mode(
    canary: Path, tmp_path: Path, command: str, mode: ExecutionMode
) -> None:
    state = tmp_path / "state"
    result = _call_bash(canary.parent, state, mode, command)
    text = "\n".join(block.text for block in result.content)
    assert result.is_error and "safety policy refused it" in text, text
    _home_intact(canary)
    assert_refusal_audited(state, command)


def test_mcp_stdio_server_refuses_and_audits(isolated_dirs: Path, canary: Path) -> None:
    home = canary.parent
    env = {k: v for k, v in os.environ.items() if k.startswith(("XDG_", "CONCH_"))}
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("conch")),
        args=["mcp", "--sandbox", str(home), "--allow-bash", "--allow-dangerous"],
        env={**env, "HOME": str(home)},
        cwd=str(home),
    )

    async def main() -> Any:
        async with Client(params) as client:
            return await client.call_tool("bash", {"command": DENYLISTED[0]})

    result = anyio.run(main)
    assert result.is_error and "Denylisted" in result.content[0].text
    _home_intact(canary)
    assert_refusal_audited(_state(), DENYLISTED[0])
