"""The preplanner of ``:auto``: a TASK list asked once, read robustly, and a plan worked
through step by step that survives the context window as a block of text and as data."""

from __future__ import annotations

import json

import pytest

from conch.errors import ModelOutputError
from conch.providers.scripted import ScriptedProvider
from conch.shell.preplan import (
    MAX_STEPS,
    PLAN_TOKENS,
    STEP_CHARS,
    Plan,
    ask_plan,
    plan_grammar,
    task_lines,
)


def test_task_lines_in_the_format_asked() -> None:
    reply = "TASK: find the failing test\nTASK: read its fixture\nTASK: fix the path\n"
    assert task_lines(reply) == ["find the failing test", "read its fixture", "fix the path"]


@pytest.mark.parametrize(
    "reply",
    [
        "Sure! Here is the plan:\n1. TASK: run the tests\n2. TASK: fix `conftest.py`\n",
        "- TASK: run the tests\n- TASK: fix `conftest.py`",
        "**TASK 1:** run the tests\n**TASK 2:** fix `conftest.py`",
        "task: run the tests\nTask: fix `conftest.py`\nThat's it.",
        "Plan:\n1. run the tests\n2) fix `conftest.py`\n\nGood luck!",
        "Step 1: run the tests\nStep 2: fix `conftest.py`",
        "**Step 1:** run the tests\n**Step 2:** fix `conftest.py`",
        "* run the tests\n* fix `conftest.py`",
    ],
)
def test_task_lines_as_a_small_model_writes_them(reply: str) -> None:
    assert task_lines(reply) == ["run the tests", "fix `conftest.py`"]


def test_task_lines_are_bounded_cleaned_and_unique() -> None:
    reply = "\n".join(f"TASK: step {n}" for n in range(20))
    assert len(task_lines(reply)) == MAX_STEPS
    assert task_lines(reply, steps=3) == ["step 0", "step 1", "step 2"]
    long = task_lines("TASK: " + "word " * 100)[0]
    assert len(long) == STEP_CHARS and long.endswith("...")
    assert task_lines("TASK: `make test`\nTASK: `make test`\nTASK:   ") == ["make test"]
    assert task_lines("I cannot help with that.") == []


def test_the_grammar_allows_one_to_n_task_lines() -> None:
    grammar = plan_grammar(3)
    assert grammar.split("\n")[0] == "root ::= line line? line?"
    assert 'line ::= "TASK: "' in grammar


def test_the_plan_is_asked_once_with_a_short_prompt_and_a_small_budget() -> None:
    provider = ScriptedProvider.of("TASK: run make test\nTASK: fix the fixture path\n")
    planned = ask_plan(
        provider, "  make the tests pass ", context=["[project] ~/p (python)", ""], steps=4
    )
    assert [s.text for s in planned.plan.steps] == ["run make test", "fix the fixture path"]
    assert planned.plan.goal == "make the tests pass"
    assert planned.usage.completion_tokens > 0
    [sent] = provider.sent
    assert sent.options.max_tokens == PLAN_TOKENS
    assert sent.options.grammar == plan_grammar(4)
    assert "at most 4 short steps" in sent.messages[0].content
    assert sent.messages[1].content == "[project] ~/p (python)\n\nGoal: make the tests pass"


def test_a_reply_without_steps_is_an_error() -> None:
    with pytest.raises(ModelOutputError, match="no TASK line"):
        ask_plan(ScriptedProvider.of("I am not sure."), "do it")
    with pytest.raises(ValueError):
        ask_plan(ScriptedProvider.of(), "  ")


def test_a_plan_is_worked_through_step_by_step() -> None:
    plan = Plan.of("ship it", ["test", "build", "upload"])
    assert plan.current is None and not plan.finished
    first = plan.next()
    assert first is not None and first.text == "test" and first.status == "running"
    assert plan.next() is first  # still running: the same step
    plan.done("make test: 12 passed")
    second = plan.next()
    assert second is not None and second.text == "build"
    plan.failed("make: *** no rule to make target 'dist'")
    assert not plan.finished and not plan.ok
    plan.skip_rest("build failed")
    assert plan.finished and not plan.ok
    assert plan.next() is None
    with pytest.raises(ValueError):
        plan.done()


def test_the_plan_as_context_marks_every_step() -> None:
    plan = Plan.of("ship it", ["test", "build", "upload"])
    plan.next()
    plan.done("12 passed")
    plan.next()
    assert plan.as_context() == (
        "[plan] Goal: ship it\n1. [x] test (12 passed)\n2. [>] build\n3. [ ] upload"
    )
    prompt = plan.step_prompt()
    assert (
        prompt.startswith("[plan] Goal: ship it")
        and "Do step 2 of 3 now, and only it: build" in prompt
    )


def test_the_plan_survives_as_data() -> None:
    plan = Plan.of("ship it", ["test", "build"])
    plan.next()
    plan.failed("no tests")
    again = Plan.from_dict(json.loads(json.dumps(plan.to_dict())))
    assert again == plan
    bad_data: list[object] = [[], {"goal": 1}, {"goal": "g", "steps": [{"status": "odd"}]}]
    for bad in bad_data:
        with pytest.raises(ValueError):
            Plan.from_dict(bad)
    finished = Plan.of("g", ["a"])
    finished.next()
    finished.done()
    assert finished.ok
    with pytest.raises(ValueError):
        finished.step_prompt()
