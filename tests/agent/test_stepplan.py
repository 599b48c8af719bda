"""An instruction of several actions as a plan (``conch.agent.stepplan``), and the files an
instruction asks for, checked in the open (``Checked``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentutil import EventLog, call, scripted_session

from conch.agent import Session
from conch.agent.builtin import ToolOptions
from conch.agent.events import (
    Checked,
    IterationLimit,
    PlanStarted,
    PlanStep,
    StepChanged,
    TurnFinished,
)
from conch.agent.loop import Limits
from conch.agent.outputs import checks
from conch.agent.stepplan import plan_record
from conch.errors import ProviderError
from conch.policy import ExecutionMode
from conch.providers.scripted import ScriptedProvider
from conch.tools import tool

TWO_ACTIONS = "Write a.py that prints 2. Run it and save the output."


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _statuses(log: EventLog) -> list[tuple[int, str]]:
    return [(e.step.number, e.step.status) for e in log.events if isinstance(e, StepChanged)]


def _in_sandbox(tmp_path: Path, *replies: str) -> Session:
    """JSON steps (so stepwise), the file tools in ``tmp_path``, writes without a question."""
    return Session(
        ScriptedProvider.of(*replies),
        tools=ToolOptions(root=tmp_path, evaluate=False, mode=ExecutionMode.FULL),
        tool_calls="json",
    )


def _write(path: str, content: str) -> str:
    return json.dumps({"tool": "fs_write", "arguments": {"path": path, "content": content}})


def _answer(text: str) -> str:
    return json.dumps({"answer": text})


# -- the plan ---------------------------------------------------------------------------------


def test_the_plan_is_announced_then_each_step_runs_and_is_done() -> None:
    session = scripted_session(
        call("add", "c1", a=1, b=1),
        "Wrote it.",
        "Ran it.",
        tools=(add,),
        stepwise=True,
    )
    log = EventLog()
    assert session.chat(TWO_ACTIONS, log) == "Ran it."
    first = log.events[0]
    assert first == PlanStarted(
        (PlanStep(1, "Write a.py that prints 2."), PlanStep(2, "Run it and save the output."))
    )
    assert _statuses(log) == [(1, "running"), (1, "done"), (2, "running"), (2, "done")]
    # each step's turn runs between its running and its done; the done follows the turn's end
    ends = [i for i, e in enumerate(log.events) if isinstance(e, TurnFinished)]
    after = [log.events[i + 1] for i in ends]
    assert [e.step.status for e in after if isinstance(e, StepChanged)] == ["done", "done"]
    assert [s.status for s in session.plan] == ["done", "done"]
    changed = [e for e in log.events if isinstance(e, StepChanged)]
    assert all(e.of == 2 for e in changed)


def test_one_action_has_no_plan_and_the_next_instruction_replaces_the_last_plan() -> None:
    session = scripted_session("Wrote it.", "Ran it.", "Hello.", tools=(add,), stepwise=True)
    session.chat(TWO_ACTIONS)
    assert len(session.plan) == 2
    log = EventLog()
    session.chat("Say hello.", log)
    assert not session.plan
    assert not any(isinstance(e, PlanStarted | StepChanged) for e in log.events)


def test_reset_forgets_the_plan() -> None:
    session = scripted_session("Wrote it.", "Ran it.", stepwise=True)
    session.chat(TWO_ACTIONS)
    assert session.plan
    session.reset()
    assert session.plan == ()


def test_a_step_that_reaches_the_limit_is_failed_and_the_rest_stay_pending() -> None:
    session = scripted_session(
        call("add", "c1", a=1, b=1),
        call("add", "c2", a=1, b=2),
        call("add", "c3", a=1, b=3),
        tools=(add,),
        stepwise=True,
        limits=Limits(max_iterations=3),
    )
    log = EventLog()
    with pytest.raises(IterationLimit) as raised:
        session.chat(TWO_ACTIONS, log)
    assert raised.value.limit == 3
    assert _statuses(log) == [(1, "running"), (1, "failed")]
    failed = session.plan[0]
    assert failed.status == "failed" and "no answer within 3 model replies" in failed.detail
    assert session.plan[1].status == "pending"


def test_a_step_whose_model_fails_is_failed_with_the_error() -> None:
    session = scripted_session("Wrote it.", ProviderError("the server went away"), stepwise=True)
    log = EventLog()
    with pytest.raises(ProviderError):
        session.chat(TWO_ACTIONS, log)
    assert _statuses(log)[-1] == (2, "failed")
    assert session.plan[1].detail == "the server went away"


def test_a_stream_left_early_marks_the_step_failed_without_a_word() -> None:
    session = scripted_session("Wrote it.", "Ran it.", stepwise=True)
    events = session.stream(TWO_ACTIONS)
    for event in events:
        if isinstance(event, TurnFinished):
            break  # the first step's turn answered; its done is not read
    events.close()
    assert [s.status for s in session.plan] == ["done", "pending"]
    session = scripted_session("Wrote it.", "Ran it.", stepwise=True)
    events = session.stream(TWO_ACTIONS)
    next(events)  # the plan
    next(events)  # step 1 running
    next(events)  # inside its turn
    events.close()
    assert session.plan[0].status == "failed" and session.plan[0].detail == "interrupted"


def test_the_plan_as_records_for_a_saved_chat() -> None:
    steps = (PlanStep(1, "Write a.py.", "done"), PlanStep(2, "Run it.", "failed", "why"))
    assert plan_record(steps) == [
        {"number": 1, "text": "Write a.py.", "status": "done", "detail": ""},
        {"number": 2, "text": "Run it.", "status": "failed", "detail": "why"},
    ]


# -- the checks -------------------------------------------------------------------------------


def test_a_file_written_is_checked_once_the_answer_is_given(tmp_path: Path) -> None:
    session = _in_sandbox(tmp_path, _write("count.txt", "3\n"), _answer("Done."))
    log = EventLog()
    session.chat("Write the number 3 to count.txt", log)
    found = [e for e in log.events if isinstance(e, Checked)]
    assert found == [Checked("count.txt", True, "exists, 1 line")]
    assert isinstance(log.events[-1], TurnFinished)
    assert log.events.index(found[0]) == len(log.events) - 2  # just before the turn ends


def test_an_answer_held_back_for_a_missing_file_is_checked_twice(tmp_path: Path) -> None:
    session = _in_sandbox(
        tmp_path, _answer("3"), _write("count.txt", "3\n"), _answer("count.txt holds 3.")
    )
    log = EventLog()
    session.chat("Write the number 3 to count.txt", log)
    found = [e for e in log.events if isinstance(e, Checked)]
    assert found == [
        Checked("count.txt", False, "is missing: asked the model once more"),
        Checked("count.txt", True, "exists, 1 line"),
    ]


def test_a_question_is_not_checked(tmp_path: Path) -> None:
    session = _in_sandbox(tmp_path, _answer("No."))
    log = EventLog()
    session.chat("Is there a notes.txt here?", log)
    assert not any(isinstance(e, Checked) for e in log.events)


def test_a_step_that_ends_with_its_file_missing_is_failed(tmp_path: Path) -> None:
    session = _in_sandbox(
        tmp_path,
        _write("a.py", "print(2)\n"),
        _answer("Wrote a.py."),
        _answer("2"),  # the output, in words only: held back
        _answer("It prints 2."),  # stands, without the file
    )
    log = EventLog()
    reply = session.chat("Write a.py that prints 2. Run it and save its output to out.txt.", log)
    assert reply == "It prints 2."
    assert _statuses(log) == [(1, "running"), (1, "done"), (2, "running"), (2, "failed")]
    assert session.plan[1].detail == "out.txt is missing"
    found = [(e.what, e.ok) for e in log.events if isinstance(e, Checked)]
    assert found == [("a.py", True), ("out.txt", False), ("out.txt", False)]


def test_what_a_check_says_of_each_kind_of_file(tmp_path: Path) -> None:
    (tmp_path / "two.txt").write_text("a\nb")  # no newline at the end
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.txt").write_text("x\n")
    names = ("two.txt", "empty.txt", "blob.bin", "deep.txt", "gone.txt")
    assert checks(names, tmp_path, held=True) == (
        Checked("two.txt", True, "exists, 2 lines"),
        Checked("empty.txt", False, "is empty: asked the model once more"),
        Checked("blob.bin", True, "exists, 3 bytes"),
        Checked("deep.txt", True, "exists"),  # found near, not at the path named
        Checked("gone.txt", False, "is missing: asked the model once more"),
    )
    assert checks(("gone.txt",), tmp_path) == (Checked("gone.txt", False, "is missing"),)
