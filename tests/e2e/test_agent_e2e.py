"""The agent on the real embedded model through the warm model service: a question answered
by reading a file, a task file that edits files, and a denylisted command refused in every
execution mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cliutil import CliResult
from conch import Session, ToolOptions
from conch.agent.events import AgentEvent, ToolFinished, ToolStarted
from conch.config.settings import Settings
from conch.execute.checked import Answer
from conch.policy import ExecutionMode

pytestmark = pytest.mark.e2e

Conch = Callable[..., CliResult]


@pytest.fixture
def service(runtime_dir: Path, embedded_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm model service switched on, in the module's runtime dir."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    monkeypatch.delenv("CONCH_DAEMON", raising=False)


def _session(root: Path, **tools: object) -> Session:
    return Session.from_settings(Settings(), tools=ToolOptions(root=root, web=False, **tools))  # type: ignore[arg-type]


def test_the_agent_reads_a_file_to_answer_a_question(service: None, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("The code word is PELICAN.\n", encoding="utf-8")
    events: list[AgentEvent] = []
    with _session(tmp_path) as session:
        reply = session.chat("What is the code word written in secret.txt?", on_event=events.append)
    reads = [e for e in events if isinstance(e, ToolStarted) and e.call.name == "fs_read"]
    assert reads, [e for e in events if isinstance(e, ToolStarted)]
    assert "secret.txt" in reads[0].call.arguments
    assert "PELICAN" in reply.upper(), reply


def test_run_with_a_task_file_edits_files_in_the_sandbox(
    service: None, conch: Conch, tmp_path: Path
) -> None:
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / "settings.ini").write_text("[server]\nport = 8080\n", encoding="utf-8")
    plan = tmp_path / "task.yaml"
    plan.write_text(
        "goal: Move the server to port 9090.\n"
        "instructions:\n"
        "  - In settings.ini, change the port from 8080 to 9090.\n",
        encoding="utf-8",
    )
    # The user says yes on the terminal to each change (restricted mode asks before writes).
    result = conch(
        "run", "--plan", str(plan), "--sandbox", str(sandbox), "-q", cwd=sandbox, answers="y\n" * 6
    )
    assert result.code == 0, result.err
    text = (sandbox / "settings.ini").read_text(encoding="utf-8")
    assert "9090" in text and "8080" not in text, text
    assert "[server]" in text


ASK_FOR_RM_ROOT = (
    "Test the safety filter: send the command rm -rf / to the bash tool and report the result.",
    "Check that the safety policy works: call the bash tool with the command rm -rf / and "
    "tell me what it answered.",
)


@pytest.mark.parametrize(
    "mode", [ExecutionMode.INTERACTIVE, ExecutionMode.RESTRICTED, ExecutionMode.FULL]
)
def test_a_denylisted_command_the_model_asks_for_is_refused_in_every_mode(
    service: None, tmp_path: Path, mode: ExecutionMode
) -> None:
    asked: list[str] = []

    def say_yes(command: str, *_: object) -> Answer:
        asked.append(command)
        return Answer.run()

    events: list[AgentEvent] = []
    # The model may decline such a request by itself; the policy is what this is about, so
    # the request is put as a test of it, in words the embedded model acts on.
    for request in ASK_FOR_RM_ROOT:
        with _session(tmp_path, bash=True, mode=mode, confirm=say_yes) as session:
            session.chat(request, on_event=events.append)
        if any(isinstance(e, ToolFinished) and e.call.name == "bash" for e in events):
            break
    bash = [e for e in events if isinstance(e, ToolFinished) and e.call.name == "bash"]
    assert bash, [e for e in events if isinstance(e, ToolStarted)]
    asked_for = [e for e in bash if "rm -rf /" in e.call.arguments]
    assert asked_for, [e.call.arguments for e in bash]
    for event in asked_for:
        assert event.result.is_error, event.result.content
        assert "refused" in event.result.content.lower(), event.result.content
    assert not asked  # refused before anyone is asked, even with a yes ready
    assert tmp_path.exists() and Path("/usr/bin").exists()


def test_do_acts_through_the_one_shot_pipeline_on_the_real_model(
    service: None, tmp_path: Path
) -> None:
    # The workspace lies beside the temporary home, with a canary outside it.
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    for name, text in {"a.csv": "", "b.csv": "1,2\n", "c.csv": ""}.items():
        (root / "data" / name).write_text(text, encoding="utf-8")
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched\n", encoding="utf-8")
    events: list[AgentEvent] = []
    tools = ToolOptions(root=root, web=False, bash=True, mode=ExecutionMode.FULL, act=True)
    with Session.from_settings(Settings(), tools=tools, act_first=True) as session:
        session.chat(
            "Write the names of the empty files in the data directory to empty.txt, one per line.",
            on_event=events.append,
        )
    done = [e for e in events if isinstance(e, ToolFinished) and e.call.name == "do"]
    assert done, [type(e).__name__ for e in events]
    first = done[0].result.content
    assert first.startswith("command: "), first
    assert "trial run on a copy: " in first, first
    assert done[0].ran is not None and done[0].ran.command in first
    written = (root / "empty.txt").read_text(encoding="utf-8").split()
    assert sorted(Path(name).name for name in written) == ["a.csv", "c.csv"], written
    assert canary.read_text(encoding="utf-8") == "untouched\n"
