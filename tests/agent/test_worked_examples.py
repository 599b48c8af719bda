"""The worked examples in the JSON-steps catalogue are true: each step, replayed against the
real tools in a sandbox holding the files the example talks about, gets the result the
example shows (a small model copies what it is shown, so a wrong example teaches a wrong
habit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conch.agent.builtin import ToolOptions, default_tools
from conch.agent.system import (
    JSON_STEPS_BASH_EXAMPLE,
    JSON_STEPS_DO_EXAMPLE,
    JSON_STEPS_EXAMPLE,
    render_catalogue,
)
from conch.config.settings import Settings
from conch.messages import ToolCall
from conch.policy import ExecutionMode
from conch.providers import ScriptedProvider
from conch.tools import ToolRegistry
from requires import needs

# The files each example's steps read or change, before its first step.
FILES: dict[str, dict[str, str]] = {
    "What database host": {"app.cfg": "db_host = db.local\ntimeout = 10\n"},
    "set the timeout to 30": {"app.cfg": "db_host = db.local\ntimeout = 10\n"},
    "Count the lines of log.txt": {"log.txt": "".join(f"line {i}\n" for i in range(12))},
}

# What the sandbox holds after the example's last step.
AFTER: dict[str, dict[str, str | None]] = {
    "set the timeout to 30": {"app.cfg": "db_host = db.local\ntimeout = 30\n"},
    "Count the lines of log.txt": {"n.txt": "12\n"},
}


def _examples() -> list[str]:
    text = "\n\n".join(
        [
            JSON_STEPS_EXAMPLE.removeprefix("EXAMPLES:\n"),
            JSON_STEPS_BASH_EXAMPLE,
        ]
    )
    return text.split("\n\n")


def _key(example: str) -> str:
    request = example.splitlines()[0]
    matches = [key for key in FILES if key in request]
    assert len(matches) == 1, f"no files set up for the example {request!r}"
    return matches[0]


def _steps(example: str) -> list[tuple[dict[str, object], str | None]]:
    """Each assistant step and the result shown after it (None after the answer)."""
    steps: list[tuple[dict[str, object], str | None]] = []
    lines = example.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("assistant: "):
            continue
        step = json.loads(line.removeprefix("assistant: "))
        shown: list[str] = []
        for after in lines[i + 1 :]:
            if after.startswith("assistant: "):
                break
            shown.append(after)
        if "answer" in step:
            steps.append((step, None))
        else:
            assert shown[0] == f"user: Result of {step['tool']}:", example
            steps.append((step, "\n".join(shown[1:])))
    return steps


@pytest.mark.parametrize("example", _examples(), ids=_key)
def test_every_step_of_a_worked_example_gets_the_result_it_shows(
    example: str, tmp_path: Path
) -> None:
    key = _key(example)
    for name, text in FILES[key].items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    tools = default_tools(
        ToolOptions(root=tmp_path, bash=True, mode=ExecutionMode.FULL, audit=False)
    )
    registry = ToolRegistry(tools)
    steps = _steps(example)
    assert steps[-1][1] is None, "an example ends with its answer"
    for number, (step, shown) in enumerate(steps[:-1]):
        assert shown is not None, "only the last step answers"
        call = ToolCall(f"call-{number}", str(step["tool"]), json.dumps(step["arguments"]))
        result = registry.call(call)
        assert not result.is_error, result.content
        # An example may leave out a result's closing note ("[app.cfg: lines 1-2 ...]").
        assert result.content.startswith(shown), (result.content, shown)
    for name, expected in AFTER.get(key, {}).items():
        if expected is None:
            assert not (tmp_path / name).exists(), name
        else:
            assert (tmp_path / name).read_text(encoding="utf-8") == expected


@needs("bubblewrap")
def test_the_do_example_gets_the_result_it_shows(tmp_path: Path) -> None:
    # The command is the scripted model's; the trial run in a copy, the run and the result
    # text are conch's own. The workspace lies beside the home (one holding it is asked about).
    root = tmp_path / "project"
    root.mkdir()
    (root / "log.txt").write_text(FILES["Count the lines of log.txt"]["log.txt"])
    provider = ScriptedProvider.from_function(lambda messages, options: "wc -l < log.txt > n.txt")
    options = ToolOptions(
        root=root,
        bash=True,
        mode=ExecutionMode.FULL,
        audit=False,
        act=True,
        settings=Settings.model_validate({"generation": {"review": 1}}),
    )
    registry = ToolRegistry(default_tools(options, None, lambda: provider))
    [(step, shown), (answer, _)] = _steps(JSON_STEPS_DO_EXAMPLE)
    call = ToolCall("call-0", str(step["tool"]), json.dumps(step["arguments"]))
    result = registry.call(call)
    assert not result.is_error, result.content
    assert result.content == shown
    assert (root / "n.txt").read_text(encoding="utf-8") == "12\n"
    assert "answer" in answer


def test_the_examples_shown_follow_the_tools_offered(tmp_path: Path) -> None:
    files_only = default_tools(ToolOptions(root=tmp_path, evaluate=False))
    with_bash = default_tools(
        ToolOptions(root=tmp_path, bash=True, evaluate=False, mode=ExecutionMode.FULL)
    )
    plain = render_catalogue(files_only, json_steps=True)
    assert "set the timeout to 30" in plain
    assert "wc -l" not in plain
    full = render_catalogue(with_bash, json_steps=True)
    assert "set the timeout to 30" in full and "wc -l log.txt" in full
    assert "wc -l" not in render_catalogue(with_bash, json_steps=False)
    provider = ScriptedProvider.of()
    acting = ToolOptions(root=tmp_path, bash=True, evaluate=False, act=True, audit=False)
    shown = render_catalogue(default_tools(acting, None, lambda: provider), json_steps=True)
    assert '{"tool": "do", "arguments": {"step": ' in shown
    assert '"tool": "bash"' not in shown
