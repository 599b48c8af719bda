"""The plan tool: a checklist the model keeps, which a front end can show."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from conch.messages import ToolResult
from conch.tools import PlanItem, PlanState, Tool, plan_tool
from conch.tools.plan import MAX_ITEMS

Call = Callable[..., ToolResult]


@pytest.fixture
def state() -> PlanState:
    return PlanState()


@pytest.fixture
def call(state: PlanState, caller: Callable[[Iterable[Tool]], Call]) -> Call:
    return caller([plan_tool(state)])


def test_adding_tasks_returns_the_checklist(call: Call, state: PlanState) -> None:
    result = call("plan", action="add", tasks=["Read the config", "Fix the bug"])
    assert result.content.splitlines() == [
        "plan: 0 of 2 done",
        "[ ] 1. Read the config",
        "[ ] 2. Fix the bug",
    ]
    assert state.items == (PlanItem(1, "Read the config"), PlanItem(2, "Fix the bug"))


def test_updates_change_status_title_and_note(call: Call, state: PlanState) -> None:
    call("plan", action="add", tasks=["a", "b", "c", "d"])
    call("plan", action="update", id=1, status="done")
    call("plan", action="update", id=2, status="in_progress")
    call("plan", action="update", id=3, status="blocked", note="needs a password")
    result = call("plan", action="update", id=4, title="d, renamed")
    assert result.content.splitlines() == [
        "plan: 1 of 4 done",
        "[x] 1. a",
        "[>] 2. b",
        "[!] 3. c (blocked: needs a password)",
        "[ ] 4. d, renamed",
    ]
    assert [i.status for i in state.items] == ["done", "in_progress", "blocked", "pending"]


def test_list_and_clear(call: Call, state: PlanState) -> None:
    assert "the plan is empty" in call("plan", action="list").content
    call("plan", action="add", tasks=["a"])
    assert call("plan", action="list").content.endswith("[ ] 1. a")
    assert "the plan is empty" in call("plan", action="clear").content
    cleared = state.items
    assert cleared == ()
    call("plan", action="add", tasks=["again"])
    assert state.items == (PlanItem(1, "again"),)


def test_mistakes_come_back_as_errors_the_model_can_fix(call: Call) -> None:
    call("plan", action="add", tasks=["a"])
    assert "no task 7 (tasks: 1)" in call("plan", action="update", id=7, status="done").content
    assert "needs id" in call("plan", action="update", status="done").content
    assert "needs a status" in call("plan", action="update", id=1).content
    assert call("plan", action="update", id=1, status="finished").is_error
    assert "non-empty titles" in call("plan", action="add", tasks=["  "]).content
    assert "non-empty titles" in call("plan", action="add").content


def test_the_list_is_capped(state: PlanState) -> None:
    state.add([f"t{n}" for n in range(MAX_ITEMS)])
    with pytest.raises(ValueError, match=f"at most {MAX_ITEMS} tasks"):
        state.add(["one more"])


def test_a_front_end_is_told_of_every_change() -> None:
    seen: list[tuple[PlanItem, ...]] = []
    state = PlanState(on_change=seen.append)
    state.add(["a"])
    state.update(1, "done")
    state.clear()
    assert seen == [(PlanItem(1, "a"),), (PlanItem(1, "a", "done"),), ()]


def test_the_tool_carries_its_own_system_addendum(state: PlanState) -> None:
    item = plan_tool(state)
    assert item.name == "plan"
    assert "plan tool" in item.system
    assert '{"action": "add"' in item.spec.description
