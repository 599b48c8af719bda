"""``conch mcp`` on the embedded model: an MCP client from the SDK asks ``propose_command``
for a command over stdio, and the model answers through the warm model service."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from conch.policy import Decision, PolicyContext, assess

pytestmark = pytest.mark.e2e


@pytest.fixture
def service(runtime_dir: Path, embedded_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm model service switched on, in the module's runtime dir."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    monkeypatch.delenv("CONCH_DAEMON", raising=False)


def test_propose_command_answers_with_a_checked_command_from_the_model(
    service: None, tmp_path: Path
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    for name in ("app.log", "notes.txt", "data.csv"):
        (root / name).write_text(f"{name}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k.startswith(("XDG_", "HOME"))}
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("conch")),
        args=["mcp", "--sandbox", str(root), "--allow-bash"],
        env=env,
        cwd=str(root),
    )

    async def main() -> tuple[dict[str, object], bool, str]:
        with anyio.fail_after(900):
            async with Client(params) as client:
                proposed = await client.call_tool(
                    "propose_command", {"request": "list the files in this directory"}
                )
                denied = await client.call_tool("bash", {"command": "rm -rf ~"})
        [block] = proposed.content
        [refusal] = denied.content
        return json.loads(block.text), bool(denied.is_error), refusal.text  # type: ignore[union-attr]

    answer, refused, why = anyio.run(main)
    command = str(answer["command"])
    verdict = assess(command, PolicyContext(cwd=root, sandbox_root=root))
    assert verdict.decision is Decision.ALLOW, (command, verdict)
    assert answer["decision"] == "allow" and answer["risk"] == "read-only", answer
    assert answer["runs_without_asking"] is True
    assert refused and "Denylisted" in why
    assert sorted(p.name for p in root.iterdir()) == ["app.log", "data.csv", "notes.txt"]
