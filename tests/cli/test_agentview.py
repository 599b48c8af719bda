"""How a finished tool call is shown: one line for most tools; a ``do`` step shows the step,
the command conch wrote with its trial run, and the output's first line. How the plan of an
instruction of several actions, its steps and the files checked are shown, and logged."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

from conch.agent import Session
from conch.agent.builtin import ToolOptions
from conch.agent.events import Checked, PlanStarted, PlanStep, StepChanged
from conch.cli.agentview import TurnView, plan_lines, steps_summary, tool_line
from conch.cli.environment import Environment
from conch.messages import ToolCall, ToolResult
from conch.policy import ExecutionMode
from conch.providers.scripted import ScriptedProvider


def _call(name: str, **arguments: str) -> ToolCall:
    return ToolCall("call-1", name, json.dumps(arguments))


def test_a_bash_call_is_one_line_with_its_command_and_first_output_line() -> None:
    line = tool_line(_call("bash", command="wc -l log.txt"), ToolResult("c", "bash", "12 log.txt"))
    assert line == "  ✓ bash: wc -l log.txt → 12 log.txt"


def test_a_do_step_shows_the_command_its_trial_run_and_its_output() -> None:
    content = "\n".join(
        [
            "command: wc -l < log.txt > n.txt",
            "trial run on a copy: worked in a throwaway copy of this directory: created n.txt",
            "(no output)",
            "[exit code 0]",
        ]
    )
    shown = tool_line(_call("do", step="count the lines"), ToolResult("c", "do", content))
    assert shown.splitlines() == [
        "  ✓ do: count the lines",
        "      $ wc -l < log.txt > n.txt",
        "      trial run: worked in a throwaway copy of this directory: created n.txt",
        "      → (no output)",
    ]


def test_a_refused_do_step_is_one_line_with_the_reason() -> None:
    result = ToolResult("c", "do", "CommandRefused: conch wrote `rm x`, which did not run", True)
    line = tool_line(_call("do", step="delete x"), result)
    assert line == "  ✗ do: delete x → CommandRefused: conch wrote `rm x`, which did not run"


# -- the plan of an instruction of several actions, and the files checked ----------------------


def _quiet_env() -> Environment:
    return Environment(
        stdin=io.StringIO(),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
        stdin_isatty=False,
        stdout_isatty=False,
        stderr_isatty=False,
        environ={},
    )


def _shown(env: Environment) -> list[str]:
    stderr = env.stderr
    assert isinstance(stderr, io.StringIO)
    return stderr.getvalue().splitlines()


STEPS = (PlanStep(1, "Write count.py."), PlanStep(2, "Run it and save its output to out.txt."))


def test_the_plan_is_listed_numbered_and_each_status_is_one_line() -> None:
    assert plan_lines(PlanStarted(STEPS)) == [
        "plan: 2 steps",
        "  1. Write count.py.",
        "  2. Run it and save its output to out.txt.",
    ]
    running = replace(STEPS[0], status="running")
    assert plan_lines(StepChanged(running, 2)) == ["step 1 of 2: Write count.py."]
    assert plan_lines(StepChanged(replace(STEPS[0], status="done"), 2)) == ["step 1 of 2 done"]
    failed = replace(STEPS[1], status="failed", detail="out.txt is missing")
    assert plan_lines(StepChanged(failed, 2)) == ["step 2 of 2 failed: out.txt is missing"]


def test_a_check_is_one_line_whether_it_passed_or_not() -> None:
    assert plan_lines(Checked("result.txt", True, "exists, 1 line")) == [
        "  check: result.txt exists, 1 line"
    ]
    held = Checked("result.txt", False, "is missing: asked the model once more")
    assert plan_lines(held) == ["  check: result.txt is missing: asked the model once more"]


def test_the_plan_as_it_stands_for_slash_plan() -> None:
    steps = (replace(STEPS[0], status="done"), replace(STEPS[1], status="failed", detail="why"))
    assert steps_summary(steps) == [
        "plan: 1 of 2 steps done",
        "  [x] 1. Write count.py.",
        "  [!] 2. Run it and save its output to out.txt. (failed: why)",
    ]
    assert steps_summary(()) == []


def _run_two_steps(tmp_path: Path, view: TurnView) -> str:
    """A scripted run of "Write count.py .... Run it and save its output to result.txt.",
    where the first answer of the second step comes before the file: what `conch run` shows."""
    (tmp_path / "essay.txt").write_text("one two three\n")
    script = "print(len(open('essay.txt').read().split()))\n"
    write = {"tool": "fs_write", "arguments": {"path": "count.py", "content": script}}
    # (no command runs in this test: the second step's result is written as the file tool)
    run = {"tool": "fs_write", "arguments": {"path": "result.txt", "content": "3\n"}}
    session = Session(
        ScriptedProvider.of(
            json.dumps(write),
            '{"answer": "count.py is written."}',
            '{"answer": "3"}',  # the number in words, before result.txt exists: held back
            json.dumps(run),
            '{"answer": "result.txt holds 3."}',
        ),
        tools=ToolOptions(root=tmp_path, evaluate=False, mode=ExecutionMode.FULL),
        tool_calls="json",
    )
    view.begin()
    return session.chat(
        "Write a Python script count.py that prints the number of words in essay.txt. "
        "Run it and save its output to result.txt.",
        on_event=view.on_event,
    )


def test_a_run_of_two_steps_shows_the_plan_the_steps_and_the_checks(tmp_path: Path) -> None:
    env = _quiet_env()
    assert _run_two_steps(tmp_path, TurnView(env, None)) == "result.txt holds 3."
    assert _shown(env) == [
        "plan: 2 steps",
        "  1. Write a Python script count.py that prints the number of words in essay.txt.",
        "  2. Run it and save its output to result.txt.",
        "step 1 of 2: Write a Python script count.py that prints the number of words in essay.txt.",
        "  ✓ fs_write path=count.py content=print(len(open('essay.t… → "
        "created 'count.py' (45 bytes, 1 lines)",
        "  check: count.py exists, 1 line",
        "step 1 of 2 done",
        "step 2 of 2: Run it and save its output to result.txt.",
        "  check: result.txt is missing: asked the model once more",
        "  ✓ fs_write path=result.txt content=3 → created 'result.txt' (2 bytes, 1 lines)",
        "  check: result.txt exists, 1 line",
        "step 2 of 2 done",
    ]


def test_quiet_hides_the_plan_and_the_checks(tmp_path: Path) -> None:
    env = _quiet_env()
    _run_two_steps(tmp_path, TurnView(env, None, quiet=True))
    assert _shown(env) == []


def test_the_log_file_gets_the_plan_and_the_checks_and_verbose_does_not_repeat_them(
    tmp_path: Path,
) -> None:
    from conch.cli.agentmetrics import Metrics

    shown: list[str] = []
    metrics = Metrics(tmp_path / "log" / "run.log", shown.append)
    metrics.on_event(PlanStarted(STEPS))
    metrics.on_event(StepChanged(replace(STEPS[0], status="running"), 2))
    metrics.on_event(Checked("count.py", True, "exists, 1 line"))
    metrics.close()
    written = [
        line.split(" ", 1)[1] for line in (tmp_path / "log" / "run.log").read_text().splitlines()
    ]
    assert written == [
        "plan: 2 steps",
        "1. Write count.py.",
        "2. Run it and save its output to out.txt.",
        "step 1 of 2: Write count.py.",
        "check: count.py exists, 1 line",
    ]
    assert shown == []
