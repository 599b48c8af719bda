"""``:auto GOAL`` planned first: the planner asked once, the agent given one step at a time,
the checklist shown as it changes, the plan kept in the model's context after the goal."""

from __future__ import annotations

from pathlib import Path

from sessionutil import open_shell, said

from conch.errors import ProviderError
from conch.providers import ScriptedProvider
from conch.shell.events import PlanChanged, ShellEvent, TurnEnded, TurnStarted, Working
from conch.shell.preplan import Plan

PLAN = "TASK: list the files\nTASK: count them"
PLANNING = {"shell": {"preplan": True}}  # planning on the active model (off by default)


def checklists(events: list[ShellEvent]) -> list[list[tuple[str, str]]]:
    """Each PlanChanged's checklist as (title, status) pairs."""
    return [
        [(item.title, item.status) for item in e.after]
        for e in events
        if isinstance(e, PlanChanged)
    ]


def test_a_goal_is_planned_then_carried_out_a_step_at_a_time(tmp_path: Path) -> None:
    replies = (PLAN, "Listed three files.", "There are 3.", "It went well.")
    with open_shell(tmp_path, *replies, sections=PLANNING) as shell:
        events = shell.line(":auto list and count the files")
        assert events[0] == TurnStarted("goal", "list and count the files")
        assert Working("planning on scripted") in events
        planner = shell.provider.sent[0]
        assert "at most 8 short steps" in planner.messages[0].content
        assert planner.messages[1].content.endswith("Goal: list and count the files")
        lists = checklists(events)
        assert lists[0] == [("list the files", "pending"), ("count them", "pending")]
        assert lists[-1] == [("list the files", "done"), ("count them", "done")]
        first, second = shell.provider.sent[1], shell.provider.sent[2]
        assert "Do step 1 of 2 now, and only it: list the files" in first.messages[-1].content
        assert "1. [x] list the files (Listed three files.)" in second.messages[-1].content
        assert "Do step 2 of 2 now, and only it: count them" in second.messages[-1].content
        ended = next(e for e in events if isinstance(e, TurnEnded))
        assert ended.ok and ended.reply == "There are 3."
        assert [t.kind for t in shell.session.book.turns] == ["plan", "auto"]
        shell.line("> how did it go?")
        system = shell.provider.sent[3].messages[0].content
        assert "[plan] Goal: list and count the files\n1. [x] list the files" in system
        shell.line(":reset")
        assert shell.session.plan is None


def test_the_plan_is_kept_in_the_saved_session(tmp_path: Path) -> None:
    from conch.shell.sessions import SavedSession

    with open_shell(tmp_path, "TASK: say hello", "Hello.", sections=PLANNING) as shell:
        shell.line(":auto greet")
        saved = SavedSession.last(shell.state_dir)
        assert saved is not None
        made, ended = [Plan.from_dict(r["plan"]) for r in saved.records() if r["type"] == "plan"]
        assert made.steps[0].text == "say hello" and made.steps[0].status == "pending"
        assert ended.steps[0].status == "done" and ended.steps[0].note == "Hello."


def test_continue_takes_the_plan_up_again_until_a_reset(tmp_path: Path) -> None:
    state_dir, work = tmp_path / "state", tmp_path / "work"
    with open_shell(
        tmp_path, PLAN, "Listed.", "Counted.", state_dir=state_dir, sections=PLANNING
    ) as shell:
        shell.line(":auto list and count the files")
    with open_shell(
        tmp_path, "It went well.", state_dir=state_dir, work=work, resume=True
    ) as shell:
        plan = shell.session.plan
        assert plan is not None and plan.goal == "list and count the files"
        assert [s.status for s in plan.steps] == ["done", "done"]
        shell.line("> how did it go?")
        system = shell.provider.sent[0].messages[0].content
        assert "[plan] Goal: list and count the files\n1. [x] list the files" in system
        shell.line(":reset")
    with open_shell(tmp_path, state_dir=state_dir, work=work, resume=True) as shell:
        assert shell.session.plan is None


def test_the_configured_planner_plans_and_the_active_model_works(tmp_path: Path) -> None:
    big = ScriptedProvider.of("TASK: tidy the build directory")
    sections = {"models": {"big": {"provider": "scripted"}}, "shell": {"planner": "big"}}
    with open_shell(tmp_path, "Tidied.", sections=sections, others={"big": big}) as shell:
        events = shell.line(":auto tidy up")
        assert Working("planning on big") in events
        assert len(big.sent) == 1 and len(shell.provider.sent) == 1
        assert [(t.model, t.kind) for t in shell.session.book.turns] == [
            ("big", "plan"),
            ("scripted", "auto"),
        ]


def test_a_planner_without_steps_leaves_the_goal_to_the_agent_whole(tmp_path: Path) -> None:
    with open_shell(tmp_path, "I cannot plan that.", "Done it.", sections=PLANNING) as shell:
        events = shell.line(":auto tidy up")
        (note,) = [s for s in said(events) if s.startswith("no plan")]
        assert note.endswith("; the agent works on the goal as a whole")
        assert shell.provider.sent[1].messages[-1].content == "tidy up"
        assert shell.session.plan is None and checklists(events) == []


def test_a_step_that_fails_ends_the_plan_and_skips_the_rest(tmp_path: Path) -> None:
    replies = (PLAN, ProviderError("model gone"))
    with open_shell(tmp_path, *replies, sections=PLANNING) as shell:
        events = shell.line(":auto list and count the files")
        assert checklists(events)[-1] == [("list the files", "blocked"), ("count them", "blocked")]
        plan = shell.session.plan
        assert plan is not None
        assert [s.status for s in plan.steps] == ["failed", "skipped"]
        ended = next(e for e in events if isinstance(e, TurnEnded))
        assert not ended.ok and "model gone" in said(events)[-1]


def test_preplan_off_hands_the_goal_over_whole(tmp_path: Path) -> None:
    sections = {"shell": {"preplan": False}}
    with open_shell(tmp_path, "Done.", sections=sections) as shell:
        events = shell.line(":auto tidy up")
        assert not [e for e in events if isinstance(e, Working)]
        assert shell.provider.sent[0].messages[-1].content == "tidy up"
