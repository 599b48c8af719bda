"""How a finished tool call is shown: one line for most tools; a ``do`` step shows the step,
the command conch wrote with its trial run, and the output's first line."""

from __future__ import annotations

import json

from conch.cli.agentview import tool_line
from conch.messages import ToolCall, ToolResult


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
