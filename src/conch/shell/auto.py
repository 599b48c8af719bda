"""Autonomous mode of ``conch shell``: the agent works toward a goal with its tools.

``:auto GOAL`` (or, with ``:auto on``, any plain-language line) hands the goal to a
``conch.Session`` with the bash tool and the plan tool (and the file tools, confined to the
shell's directory), as ``conch run`` does, in restricted-autonomous mode: a read-only command
runs at once, any other waits for the user's yes (``Question("agent")``), and a destructive
or privileged one HALTs for a typed ``yes`` (``Question("halt")``, in every mode; a halted
step is never allowed "always"). The policy checks every step first; a command the user
refused is not run again in the same autonomous session (the agent is told so). A step limit
(``max_steps``) ends a goal that does not finish; Ctrl+C stops it and returns to the prompt.

With ``shell.preplan: true``, or a ``shell.planner`` named, the goal is planned first: the
planner model (``shell.planner``, by default the active one) is asked once for at most
``shell.plan_steps`` steps (``conch.shell.preplan.ask_plan``), and the agent carries them
out one at a time (``Plan.step_prompt``), the checklist shown as it changes
(``PlanChanged``). The plan stays in the shell's system prompt (``Plan.as_context``) while the
window slides, and after the goal, until the next goal or ``:reset``. A planner that cannot
answer leaves the goal to the agent as a whole.

The commands the agent ran reach the shell's context like typed ones, and the goal and the
agent's answer become a turn of the conversation. The agent is kept across goals (with the
commands the user refused) while the shell stays in the same directory and on the same model.
Its context window is the model's (``conch.providers.window.context_window``, asked once per
model for the session: ``ShellParts.window``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from conch.errors import ConchError, UsageError
from conch.messages import Finished, Usage
from conch.shell.events import (
    PlanChanged,
    Question,
    Said,
    ShellEvent,
    TurnEnded,
    TurnStarted,
    Working,
)
from conch.shell.parts import ShellParts

if TYPE_CHECKING:
    from conch.agent.events import AgentEvent
    from conch.agent.session import Session
    from conch.execute.checked import Answer
    from conch.execute.checked import Approve as ApproveStep
    from conch.policy import Verdict
    from conch.policy.confirm import Confirmation
    from conch.providers.base import Provider
    from conch.shell.events import Approve, QuestionKind
    from conch.shell.preplan import Plan
    from conch.tools.plan import PlanItem
    from conch.tools.plan import Status as PlanStatus

__all__ = ["GOAL_PREFIX", "AutoAgent", "halting", "plan_items", "run_goal"]

#: How a goal opens its turn in the shell's conversation.
GOAL_PREFIX = "[auto] "


class AutoAgent:
    """The agent of autonomous mode, for the shell ``parts`` in their directory now."""

    def __init__(self, parts: ShellParts) -> None:
        from conch.agent.builtin import ToolOptions
        from conch.agent.loop import Limits
        from conch.agent.session import Session
        from conch.policy import ExecutionMode
        from conch.tools.plan import PlanState

        self.root = parts.state.cwd
        self.provider = parts.provider
        self.refused: list[tuple[str, str]] = []  # (command, why) since the last goal ended
        self.changes: list[PlanChanged] = []  # the checklist's changes not yet told
        self._shown: tuple[PlanItem, ...] = ()
        tools = ToolOptions(
            root=Path(self.root),
            bash=True,
            mode=ExecutionMode.RESTRICTED,
            confirm=halting(parts.approve),
            evaluate=False,
            plan_state=PlanState(on_change=self._plan_changed),
            on_refused=lambda command, why: self.refused.append((command, why)),
            permissions=parts.permissions,
            pass_env=tuple(parts.loaded.settings.execution.pass_env),
        )
        ai = parts.choice.ai
        self.session: Session = Session(
            parts.provider,
            tools=tools,
            tool_calls=ai.tool_calls,
            options=parts.options,
            limits=Limits(max_iterations=parts.max_steps),
            context_tokens=parts.window(),
        )
        servers = parts.mcp_servers()
        if servers is not None:  # the shell owns them: they outlive this agent
            self.session.with_mcp(servers, close=False)

    def _plan_changed(self, items: tuple[PlanItem, ...]) -> None:
        self.changes.append(PlanChanged(self._shown, items))
        self._shown = items


def halting(approve: Approve) -> ApproveStep:
    """The question before an agent's step, for ``conch.execute.checked.run_checked``: a
    ``Question("agent")`` (run it? yes, no, or always), except that a step the rule marks
    severe (it destroys, or needs root) is a ``Question("halt")``, which the user answers
    with a typed yes, and which is never allowed for the rest of the session."""

    def ask(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        from conch.execute.checked import Answer, Choice

        kind: QuestionKind = "halt" if wanted.severe else "agent"
        answer = approve(Question(kind, command, verdict, wanted))
        if kind == "halt" and answer.choice is Choice.RUN and answer.always:
            return Answer.run()
        return answer

    return ask


def agent_for(parts: ShellParts) -> AutoAgent:
    """The agent kept for ``parts``, or a new one when the directory or the model changed
    (or ``:reset`` forgot it)."""
    agent = parts.auto
    if (
        not isinstance(agent, AutoAgent)
        or agent.root != parts.state.cwd
        or agent.provider is not parts.provider
    ):
        agent = AutoAgent(parts)
        parts.auto = agent
    return agent


def run_goal(parts: ShellParts, goal: str) -> Iterator[ShellEvent]:
    """Let the agent work toward ``goal`` (planned first, with ``shell.preplan``); its events
    pass through, its answer becomes a turn."""
    from conch.agent.events import IterationLimit

    agent = agent_for(parts)
    yield TurnStarted("goal", goal)
    spent: list[Usage] = []
    plan: Plan | None = None
    try:
        settings = parts.settings
        if settings.preplan or (settings.preplan is None and settings.planner is not None):
            plan = yield from _planned(parts, goal)
        if plan is None:
            reply = yield from _stream(parts, agent, goal, spent)
        else:
            reply = yield from _work_through(parts, agent, plan, spent)
    except KeyboardInterrupt:
        yield from _ended(parts, plan, "stopped")
        yield TurnEnded("goal", goal, usage=_total(spent), interrupted=True)
        yield from parts.count(_total(spent), "auto")
        yield Said("stopped; back to the prompt")
        return
    except IterationLimit as exc:
        yield from _ended(parts, plan, "out of steps")
        yield TurnEnded("goal", goal, usage=_total(spent), error=exc)
        yield from parts.count(_total(spent), "auto")
        yield Said(f"{exc}; give it more with --max-steps, or split the goal", warning=True)
        return
    except ConchError as exc:
        yield from _ended(parts, plan, str(exc))
        yield TurnEnded("goal", goal, usage=_total(spent), error=exc)
        yield from parts.count(_total(spent), "auto")
        yield Said(str(exc), warning=True)
        return
    finally:
        agent.changes.clear()
    yield TurnEnded("goal", goal, reply, _total(spent))
    yield from parts.count(_total(spent), "auto")
    yield from _remember(parts, goal, reply, _total(spent))
    if agent.refused:
        count = len(agent.refused)
        yield Said(f"{count} command{'s' if count > 1 else ''} of the agent's did not run")
        agent.refused.clear()


def _stream(
    parts: ShellParts, agent: AutoAgent, prompt: str, spent: list[Usage]
) -> Generator[ShellEvent, None, str]:
    """One run of the agent on ``prompt``: its events passed on (the commands it ran
    recorded), the tokens of its replies added to ``spent``; returns its answer."""
    events = agent.session.stream(prompt)
    try:
        while True:
            try:
                event = next(events)
            except StopIteration as stop:
                reply: str = stop.value
                return reply
            if isinstance(event, Finished):
                spent.append(event.usage)
            yield from _record(parts, event)
            yield event
            while agent.changes:
                yield agent.changes.pop(0)
    finally:
        events.close()


def _planned(parts: ShellParts, goal: str) -> Generator[ShellEvent, None, Plan | None]:
    """The plan of ``goal`` from the planner model, shown; None when it gave none (said:
    the agent works on the goal as a whole). Ctrl+C here stops the goal."""
    from conch.shell.preplan import ask_plan

    planner, name = _planner(parts)
    yield Working(f"planning on {name}")
    context = []
    if parts.project is not None:
        summary = parts.project.get(parts.state.cwd)
        context = [summary.text] if summary is not None else []
    try:
        planned = ask_plan(
            planner, goal, context=context, steps=parts.settings.plan_steps, options=parts.options
        )
    except ConchError as exc:
        yield Said(f"no plan ({exc}); the agent works on the goal as a whole")
        return None
    yield from parts.count(planned.usage, "plan", model=name)
    parts.plan = planned.plan
    yield from parts.save({"type": "plan", "plan": planned.plan.to_dict()})
    yield PlanChanged((), plan_items(planned.plan))
    return planned.plan


def _planner(parts: ShellParts) -> tuple[Provider, str]:
    """The planner's provider and name: ``shell.planner``, else the active model."""
    from conch.shell.models import choose_model

    name = parts.settings.planner
    if name is None or name == parts.choice.name:
        return parts.provider, parts.choice.name
    try:
        choice = choose_model(parts.loaded.settings, name, "shell.planner")
    except UsageError:
        return parts.provider, parts.choice.name
    return parts.provider_of(choice), choice.name


def _work_through(
    parts: ShellParts, agent: AutoAgent, plan: Plan, spent: list[Usage]
) -> Generator[ShellEvent, None, str]:
    """The plan's steps, one agent run each, the checklist shown as each starts and ends;
    returns the last step's answer. A step that fails ends the plan (the rest skipped)."""
    reply = ""
    while plan.next() is not None:
        shown = plan_items(plan)
        yield PlanChanged(_before(shown), shown)
        reply = yield from _stream(parts, agent, plan.step_prompt(), spent)
        before = plan_items(plan)
        plan.done(_first_line(reply))
        yield PlanChanged(before, plan_items(plan))
        yield from parts.save({"type": "plan", "plan": plan.to_dict()})  # as --continue finds it
    return reply


def _ended(parts: ShellParts, plan: Plan | None, why: str) -> Iterator[ShellEvent]:
    """A plan cut short: the running step failed, the rest skipped, the checklist shown."""
    if plan is None or plan.current is None:
        return
    before = plan_items(plan)
    plan.failed(why)
    plan.skip_rest("not reached")
    yield PlanChanged(before, plan_items(plan))
    yield from parts.save({"type": "plan", "plan": plan.to_dict()})


_ITEM_STATUS: dict[str, PlanStatus] = {
    "pending": "pending",
    "running": "in_progress",
    "done": "done",
    "failed": "blocked",
    "skipped": "blocked",
}


def plan_items(plan: Plan) -> tuple[PlanItem, ...]:
    """A plan as the checklist a front end shows (``conch.tools.plan.PlanItem``): a failed
    or skipped step is ``blocked``, with its note."""
    from conch.tools.plan import PlanItem

    return tuple(
        PlanItem(number, step.text, _ITEM_STATUS[step.status], step.note or _skipped(step.status))
        for number, step in enumerate(plan.steps, 1)
    )


def _skipped(status: str) -> str:
    return "skipped" if status == "skipped" else ""


def _before(items: tuple[PlanItem, ...]) -> tuple[PlanItem, ...]:
    """The checklist before its running step started (so only that step is shown again)."""
    from dataclasses import replace

    return tuple(replace(i, status="pending") if i.status == "in_progress" else i for i in items)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


def _total(spent: list[Usage]) -> Usage:
    return Usage(sum(u.prompt_tokens for u in spent), sum(u.completion_tokens for u in spent))


def _record(parts: ShellParts, event: AgentEvent) -> Iterator[ShellEvent]:
    """A command the agent ran reaches the shell's context like a typed one: the command
    that ran, its exit code and what it printed."""
    from conch.agent.events import ToolFinished

    if not isinstance(event, ToolFinished) or event.ran is None:
        return
    ran = event.ran
    if parts.settings.capture_output:
        parts.context.record(ran.command, ran.exit_code, ran.output)
    yield from parts.save(
        {"type": "exec", "command": ran.command, "exit_code": ran.exit_code, "source": "auto"}
    )


def _remember(parts: ShellParts, goal: str, reply: str, usage: Usage) -> Iterator[ShellEvent]:
    """The goal and the agent's answer as a turn of the shell's conversation."""
    from conch.shell.remember import evicted
    from conch.shell.turns import Reply

    before = parts.context.turns
    prompt = parts.context.ask(GOAL_PREFIX + goal)
    sent = parts.context.turns[-1].content
    parts.context.answer(reply)
    yield from parts.save_turn(f":auto {goal}", Reply(reply, sent, usage, prompt.eviction, ()))
    yield from evicted(parts, prompt.eviction, before)
