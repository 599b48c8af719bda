"""``conch run`` and ``conch chat`` with an instruction of several actions, on a scripted
model that writes JSON steps: the plan, each step's status and the files checked on stderr,
``--quiet`` without them, and the plan kept with a saved chat and shown by ``/plan``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from cliutil import CliResult, step, write_config
from conch.cli.sessionfile import session_path
from conch.config.paths import Paths
from conch.providers.base import register_provider
from conch.providers.scripted import ScriptedProvider

Conch = Callable[..., CliResult]
FULL = "--allow-dangerous"  # the file tools write without a question (no command runs)
NO_ACT = "--no-act"  # the scripted model makes every call itself
TWO_ACTIONS = "Write notes.md with a title. Then save the word count of notes.md to count.txt."


def _json_steps(home: Path, name: str, *replies: str) -> ScriptedProvider:
    """A scripted model the config selects, written to as a model of JSON steps."""
    provider = ScriptedProvider.of(*replies)
    register_provider(name, lambda settings: provider)
    write_config(home, f"ai:\n  provider: {name}\n  tool_calls: json\n")
    return provider


def _replies() -> tuple[str, ...]:
    return (
        step("fs_write", path="notes.md", content="# Notes\n"),
        json.dumps({"answer": "notes.md is written."}),
        json.dumps({"answer": "2"}),  # in words only: held back, count.txt is missing
        json.dumps({"answer": "It has 2 words."}),  # stands, without the file
    )


def test_run_shows_the_plan_each_step_and_each_check(conch: Conch, isolated_dirs: Path) -> None:
    _json_steps(isolated_dirs, "plan-run", *_replies())
    result = conch("run", FULL, NO_ACT, TWO_ACTIONS)
    assert result.code == 0, result.err
    assert result.out == "It has 2 words.\n"
    lines = result.err.splitlines()
    start = lines.index("plan: 2 steps")
    shown = [line for line in lines[start:] if not line.startswith("  ✓")]
    assert shown == [
        "plan: 2 steps",
        "  1. Write notes.md with a title.",
        "  2. Then save the word count of notes.md to count.txt.",
        "step 1 of 2: Write notes.md with a title.",
        "  check: notes.md exists, 1 line",
        "step 1 of 2 done",
        "step 2 of 2: Then save the word count of notes.md to count.txt.",
        "  check: count.txt is missing: asked the model once more",
        "  check: count.txt is missing",
        "step 2 of 2 failed: count.txt is missing",
    ]


def test_run_quiet_shows_none_of_it(conch: Conch, isolated_dirs: Path) -> None:
    _json_steps(isolated_dirs, "plan-run-quiet", *_replies())
    result = conch("run", "--quiet", FULL, NO_ACT, TWO_ACTIONS)
    assert result.code == 0, result.err
    assert "plan:" not in result.err and "check:" not in result.err
    assert "step 1 of 2" not in result.err


def test_a_chat_keeps_the_plan_with_the_saved_chat_and_shows_it_with_slash_plan(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    _json_steps(isolated_dirs, "plan-chat", *_replies())
    result = conch("chat", FULL, NO_ACT, stdin=f"{TWO_ACTIONS}\n/plan\n/exit\n", tty=True)
    assert result.code == 0, result.err
    assert "step 2 of 2 failed: count.txt is missing" in result.err
    assert (
        "plan: 1 of 2 steps done\n"
        "  [x] 1. Write notes.md with a title.\n"
        "  [!] 2. Then save the word count of notes.md to count.txt. (failed: count.txt is "
        "missing)\n"
    ) in result.out
    saved = json.loads(
        session_path(Paths.default().state_dir, (tmp_path / "work").resolve()).read_text()
    )
    assert [s["status"] for s in saved["plan"]] == ["done", "failed"]
    assert saved["plan"][1]["detail"] == "count.txt is missing"
