"""``conch run``: an instruction or a plan file worked through by the agent, with the
scripted provider (control flow, not model quality): files edited in a sandbox, the
checklist on stderr, the answer on stdout, and the exit status."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cliutil import (
    CliResult,
    capture,
    dead_server,
    missing_model,
    one_line_error,
    script,
    step,
    write_config,
)
from conch.config.paths import Paths

Conch = Callable[..., CliResult]

YAML_PLAN = """\
goal: Mark the release as ready
context:
  file: release.txt
instructions:
  - Change the status to ready
"""
JSON_PLAN = json.dumps(
    {
        "goal": "Mark the release as ready",
        "context": {"file": "release.txt"},
        "instructions": ["Change the status to ready"],
    }
)
MARKDOWN_PLAN = """\
# Mark the release as ready

## Context
- file: release.txt

## Instructions
1. Change the status to ready
"""


def bash_once(
    conch: Conch, home: Path, name: str, command: str, reply: str, *argv: str
) -> tuple[CliResult, str]:
    """``conch run ARGV`` with a model that calls bash with ``command``, then says ``reply``:
    the result, and what the agent told the model of the command."""
    provider = capture(home, name, step("bash", command=command), reply)
    result = conch("run", *argv)
    return result, provider.sent[1].messages[-1].content


def test_an_instruction_edits_the_sandbox_and_prints_only_the_answer(
    conch: Conch, isolated_dirs: Path
) -> None:
    script(
        isolated_dirs,
        step("fs_write", path="notes.txt", content="buy milk\n"),
        "I wrote notes.txt.",
    )
    # No terminal to ask on: a write runs only where the mode runs it without a question.
    result = conch("run", "--allow-dangerous", "--no-act", "write my shopping list to notes.txt")
    assert result.code == 0, result.err
    assert result.out == "I wrote notes.txt.\n"
    assert (isolated_dirs.parent / "work" / "notes.txt").read_text() == "buy milk\n"
    assert "conch run: write my shopping list to notes.txt" in result.err
    assert "✓ fs_write path=notes.txt" in result.err
    assert "created 'notes.txt'" in result.err


@pytest.mark.parametrize(
    ("name", "text"),
    [("plan.yaml", YAML_PLAN), ("plan.json", JSON_PLAN), ("plan.md", MARKDOWN_PLAN)],
)
def test_a_plan_file_guides_the_agent_and_its_checklist_goes_to_stderr(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, name: str, text: str
) -> None:
    sandbox = tmp_path / "release"
    sandbox.mkdir()
    (sandbox / "release.txt").write_text("version: 2\nstatus: draft\n", encoding="utf-8")
    (tmp_path / "work" / name).write_text(text, encoding="utf-8")
    provider = capture(
        isolated_dirs,
        f"run-plan-{name}",
        step("plan", action="add", tasks=["Change the status to ready"]),
        step("fs_edit", path="release.txt", old_text="status: draft", new_text="status: ready"),
        step("plan", action="update", id=1, status="done"),
        "The release is marked ready.",
    )
    result = conch("run", "--allow-dangerous", "--sandbox", str(sandbox), "--plan", name)
    assert result.code == 0, result.err
    assert result.out == "The release is marked ready.\n"
    assert (sandbox / "release.txt").read_text() == "version: 2\nstatus: ready\n"
    task = provider.sent[0].messages[-1].content
    assert "GOAL: Mark the release as ready" in task
    assert "- File: release.txt" in task
    assert "1. Change the status to ready" in task
    err = result.err.splitlines()
    assert "  [ ] 1. Change the status to ready" in err
    assert "  [x] 1. Change the status to ready" in err
    assert err[-2:] == ["plan: 1 of 1 done", "  [x] 1. Change the status to ready"]


def test_the_iteration_limit_stops_the_agent_with_exit_6(conch: Conch, isolated_dirs: Path) -> None:
    script(
        isolated_dirs,
        step("fs_list", path="."),
        step("fs_glob", pattern="*.txt"),
        "never read",
    )
    result = conch("run", "--max-iterations", "2", "look around")
    assert result.code == 6
    assert result.out == ""
    assert result.err.splitlines()[-1] == (
        "conch: the agent stopped after 2 model replies without a final answer (iteration "
        "limit 2); give it more with --max-iterations, or split the task"
    )


def test_a_command_that_needs_a_yes_is_refused_without_a_terminal_exit_4(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    reply = "I could not create the build directory: it needs your yes."
    result, told = bash_once(
        conch,
        isolated_dirs,
        "run-no-tty",
        "mkdir build",
        reply,
        "--allow-bash",
        "--no-act",
        "make a build directory",
    )
    assert result.code == 4
    assert result.out == reply + "\n"
    assert not (tmp_path / "work" / "build").exists()
    assert "no one can be asked" in told
    assert "✗ bash: mkdir build" in result.err
    assert result.err.splitlines()[-1] == (
        "conch: 1 command the agent proposed did not run (it needed a yes and there was no "
        "terminal to ask on); the task may be unfinished"
    )


def test_read_only_commands_run_at_once_in_restricted_mode(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    (tmp_path / "work" / "hello.txt").write_text("hi\n", encoding="utf-8")
    result, told = bash_once(
        conch,
        isolated_dirs,
        "run-read-only",
        "ls",
        "There is hello.txt.",
        "--allow-bash",
        "--no-act",
        "what is here",
    )
    assert result.code == 0, result.err
    assert "hello.txt" in told
    assert "✓ bash: ls → hello.txt" in result.err


def test_the_policy_refusing_a_command_is_exit_3(conch: Conch, isolated_dirs: Path) -> None:
    result, told = bash_once(
        conch,
        isolated_dirs,
        "run-policy",
        "rm -rf /",
        "I will not do that.",
        "--allow-dangerous",
        "--no-act",
        "clean everything",
    )
    assert result.code == 3
    assert result.out == "I will not do that.\n"
    assert "the safety policy refused it" in told
    assert "the safety policy refused it" in result.err.splitlines()[-1]


def test_allow_dangerous_runs_a_write_command_without_asking(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    script(isolated_dirs, step("bash", command="touch made.txt"), "Made it.")
    result = conch("run", "--allow-dangerous", "--no-act", "make a file")
    assert result.code == 0, result.err
    assert (tmp_path / "work" / "made.txt").exists()
    audit = (Paths.default().state_dir / "audit.log").read_text(encoding="utf-8")
    assert "touch made.txt" in audit


def test_act_sends_the_instruction_to_do_first_and_shows_the_step(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    # The first model reply is the pipeline's command for the instruction; the second, the
    # agent's answer once it has read what do did.
    write_config(
        isolated_dirs,
        'ai:\n  provider: scripted\n  script:\n    - "echo made > made.txt"\n    - "Made it."\n'
        "generation:\n  review: 1\n  dry_run: false\nvalidation:\n  enabled: false\n",
    )
    result = conch("run", "--act", "--allow-dangerous", "make a file called made.txt")
    assert result.code == 0, result.err
    assert result.out == "Made it.\n"
    assert (tmp_path / "work" / "made.txt").exists()
    assert "✓ do: make a file called made.txt" in result.err
    assert "$ echo made > made.txt" in result.err and "trial run: not tried" in result.err


def test_act_without_a_mode_asks_like_allow_bash(conch: Conch, isolated_dirs: Path) -> None:
    write_config(
        isolated_dirs,
        'ai:\n  provider: scripted\n  script:\n    - "touch made.txt"\n    - "Not done."\n'
        '    - "It needs your yes."\n'
        "generation:\n  review: 1\n  dry_run: false\nvalidation:\n  enabled: false\n",
    )
    result = conch("run", "--act", "make a file called made.txt")
    assert result.code == 4, result.err  # restricted mode: a write needs a yes, none to ask
    assert "conch wrote `touch made.txt`, which did not run" in result.err


def test_a_yes_on_the_terminal_lets_a_command_run(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    script(isolated_dirs, step("bash", command="touch yes.txt"), "Made it.")
    result = conch("run", "--allow-bash", "--no-act", "make a file", tty=True, answers="y\n")
    assert result.code == 0, result.err
    assert (tmp_path / "work" / "yes.txt").exists()
    assert "the agent wants to run:" in result.err
    assert "  touch yes.txt" in result.err and "risk: writes" in result.err
    assert "Run it? [y/N/a]" in result.err


def test_no_is_the_default_answer_and_is_exit_4(
    conch: Conch, isolated_dirs: Path, tmp_path: Path
) -> None:
    script(isolated_dirs, step("bash", command="touch no.txt"), "You said no.")
    result = conch("run", "--allow-bash", "--no-act", "make a file", tty=True, answers="\n")
    assert result.code == 4
    assert not (tmp_path / "work" / "no.txt").exists()
    assert "you said no" in result.err.splitlines()[-1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run"], "no task given"),
        (["run", "fix", "it"], 'takes one instruction in quotes: conch run "fix it"'),
        (["run", "--plan", "p.yaml", "fix it"], "give an instruction or --plan FILE, not both"),
        (["run", "--mode", "full", "x"], "say so with --allow-dangerous"),
        (["run", "--mode", "interactive", "x"], "add --allow-bash"),
        (["run", "--allow-dangerous", "--mode", "interactive", "x"], "cannot be combined"),
        (["run", "--max-iterations", "0", "x"], "--max-iterations must be 1 or more"),
        (["run", "--sandbox", "nowhere", "x"], "--sandbox nowhere:"),
        (["run", "--tools-mode", "bogus", "x"], "argument --tools-mode: invalid choice"),
    ],
)
def test_bad_command_lines_are_one_line_usage_errors(
    conch: Conch, argv: list[str], message: str
) -> None:
    assert message in one_line_error(conch(*argv), 2)


def test_a_missing_plan_file_names_it(conch: Conch, isolated_dirs: Path) -> None:
    script(isolated_dirs, "unused")
    result = conch("run", "--plan", "missing.yaml")
    assert result.code == 1
    assert result.err == (
        "conch: plan file missing.yaml does not exist; give a YAML, JSON or Markdown task "
        "file (`conch help run` shows one)\n"
    )


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("bad.yaml", "goal: [unclosed\n", "while parsing"),
        ("nogoal.json", '{"instructions": ["x"]}', "a task needs a `goal`"),
        ("empty.md", "just words\n", "a task needs a `goal`"),
    ],
)
def test_a_bad_plan_file_is_one_line_naming_it(
    conch: Conch, isolated_dirs: Path, tmp_path: Path, name: str, text: str, problem: str
) -> None:
    script(isolated_dirs, "unused")
    (tmp_path / "work" / name).write_text(text, encoding="utf-8")
    result = conch("run", "--plan", name)
    assert result.code == 1
    assert result.err.startswith(f"conch: task file {tmp_path / 'work' / name}: ")
    assert problem in result.err and result.err.count("\n") == 1


def test_a_dead_server_is_one_line_and_exit_5(conch: Conch, isolated_dirs: Path) -> None:
    dead_server(isolated_dirs)
    error = one_line_error(conch("run", "-q", "hello"), 5)
    assert error.startswith("conch: cannot reach the model server at http://127.0.0.1:9")


def test_a_missing_model_file_is_one_line_and_exit_1(conch: Conch, isolated_dirs: Path) -> None:
    missing_model(isolated_dirs)
    error = one_line_error(conch("run", "-q", "hello"), 1)
    assert "/no/m.gguf" in error and "fix the path" in error
