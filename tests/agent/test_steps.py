"""An instruction of several actions, one action per turn (``conch.agent.steps``)."""

from __future__ import annotations

import pytest
from agentutil import call, scripted_session, sent

from conch.agent import IterationLimit, Limits, TurnFinished
from conch.agent.events import AgentEvent
from conch.agent.steps import split_steps
from conch.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.mark.parametrize(
    ("instruction", "steps"),
    [
        (
            "Write a Python script a.py that prints 1. Run it and save its output to a.txt.",
            ["Write a Python script a.py that prints 1.", "Run it and save its output to a.txt."],
        ),
        (
            "Write a shell script s.sh that prints hi. Make it executable, run it, and save "
            "its output to s.txt.",
            [
                "Write a shell script s.sh that prints hi.",
                "Make it executable, run it, and save its output to s.txt.",
            ],
        ),
        # context before the first action stays with it
        (
            "data.csv has a header line. Write the sum of its second column to sum.txt. Then "
            "delete data.csv.",
            [
                "data.csv has a header line. Write the sum of its second column to sum.txt.",
                "Then delete data.csv.",
            ],
        ),
    ],
)
def test_each_sentence_that_starts_an_action_starts_a_step(
    instruction: str, steps: list[str]
) -> None:
    assert split_steps(instruction) == steps


@pytest.mark.parametrize(
    "instruction",
    [
        "How many lines does access.log have?",
        "numbers.txt holds one number per line. Write their sum to total.txt.",
        "In config.ini, change the port to 9090. Leave everything else as it is.",
        "My home is a mess. Delete everything in it. No need to ask me first.",
        "Rename every .txt file so that it ends in .md (notes1.txt becomes notes1.md).",
        "  ",
        "Write a.txt with hi.\nRun the tests.",
    ],
)
def test_one_action_with_its_context_and_conditions_is_one_step(instruction: str) -> None:
    assert split_steps(instruction) == [instruction]


def test_a_stepwise_session_gives_one_action_per_turn_and_returns_the_last_reply() -> None:
    session = scripted_session(
        call("add", "c1", a=1, b=1),
        "Wrote it.",
        call("add", "c2", a=2, b=2),
        "Ran it.",
        tools=(add,),
        stepwise=True,
    )
    events: list[AgentEvent] = []
    reply = session.chat("Write a.py that prints 2. Run it and save the output.", events.append)
    assert reply == "Ran it."
    users = [m.content for m in session.history if m.role == "user"]
    assert users == ["Write a.py that prints 2.", "Run it and save the output."]
    # the second action sees the first one's whole turn
    second = sent(session).sent[2].messages
    assert [m.content for m in second if m.role == "user"] == users
    assert [e.iterations for e in events if isinstance(e, TurnFinished)] == [2, 2]


def test_the_steps_share_one_turns_iteration_limit() -> None:
    session = scripted_session(
        call("add", "c1", a=1, b=1),
        call("add", "c2", a=1, b=2),
        "Wrote it.",
        call("add", "c3", a=2, b=2),
        call("add", "c4", a=2, b=3),
        tools=(add,),
        stepwise=True,
        limits=Limits(max_iterations=4),
    )
    with pytest.raises(IterationLimit) as raised:
        session.chat("Write a.py that prints 2. Run it and save the output.")
    assert raised.value.limit == 4  # the limit set: 3 of its 4 replies went to the first action
    assert len(sent(session).sent) == 4


def test_stepwise_is_on_where_the_model_writes_json_steps_and_can_be_set() -> None:
    assert scripted_session(tool_calls="json").stepwise
    assert not scripted_session().stepwise  # native tool calls
    assert not scripted_session(tool_calls="json", stepwise=False).stepwise
    session = scripted_session("Done both.", stepwise=False)
    assert session.chat("Write a.py. Run it.") == "Done both."
    assert [m.content for m in session.history if m.role == "user"] == ["Write a.py. Run it."]


def test_a_task_files_prompt_is_one_step() -> None:
    from conch.agent.task import Task, task_prompt

    prompt = task_prompt(Task(goal="Docs", instructions=("Write a.txt with hi", "Run the tests")))
    assert split_steps(prompt) == [prompt]
