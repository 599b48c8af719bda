"""Autonomous mode of ``conch shell``: the agent works toward a goal with its tools.

``:auto GOAL`` (or, with ``:auto on``, any plain-language line) hands the goal to a
``conch.Session`` with the bash tool and the plan tool (and the file tools, confined to the
shell's directory), as ``conch run`` does, in restricted-autonomous mode: a read-only command
runs at once, any other waits for the user's yes (``Question("agent")``), and a destructive
or privileged one HALTs for a typed ``yes`` (``Question("halt")``, in every mode; a halted
step is never allowed "always"). The policy checks every step first; a command the user
refused is not run again in the same autonomous session (the agent is told so). A step limit
(``max_steps``) ends a goal that does not finish; Ctrl+C stops it and returns to the prompt.

The commands the agent ran reach the shell's context like typed ones, and the goal and the
agent's answer become a turn of the conversation. The agent is kept across goals (with the
commands the user refused) while the shell stays in the same directory and on the same model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from conch.errors import ConchError
from conch.messages import Finished, Usage
from conch.shell.events import PlanChanged, Question, Said, ShellEvent, TurnEnded, TurnStarted
from conch.shell.parts import ShellParts

if TYPE_CHECKING:
    from conch.agent.events import AgentEvent
    from conch.agent.session import Session
    from conch.execute.checked import Answer
    from conch.execute.checked import Approve as ApproveStep
    from conch.policy import Verdict
    from conch.policy.confirm import Confirmation
    from conch.shell.events import Approve, QuestionKind
    from conch.tools.plan import PlanItem

__all__ = ["GOAL_PREFIX", "AutoAgent", "halting", "run_goal"]

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
            context_tokens=ai.local.n_ctx if ai.provider == "local" else 4096,
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
    """Let the agent work toward ``goal``; its events pass through, its answer becomes a
    turn."""
    from conch.agent.events import IterationLimit

    agent = agent_for(parts)
    yield TurnStarted("goal", goal)
    usage = Usage()
    events = agent.session.stream(goal)
    try:
        while True:
            try:
                event = next(events)
            except StopIteration as stop:
                reply: str = stop.value
                break
            if isinstance(event, Finished):
                usage = Usage(
                    usage.prompt_tokens + event.usage.prompt_tokens,
                    usage.completion_tokens + event.usage.completion_tokens,
                )
            yield from _record(parts, event)
            yield event
            while agent.changes:
                yield agent.changes.pop(0)
    except KeyboardInterrupt:
        events.close()
        yield TurnEnded("goal", goal, usage=usage, interrupted=True)
        yield from parts.count(usage, "auto")
        yield Said("stopped; back to the prompt")
        return
    except IterationLimit as exc:
        yield TurnEnded("goal", goal, usage=usage, error=exc)
        yield from parts.count(usage, "auto")
        yield Said(f"{exc}; give it more with --max-steps, or split the goal", warning=True)
        return
    except ConchError as exc:
        yield TurnEnded("goal", goal, usage=usage, error=exc)
        yield from parts.count(usage, "auto")
        yield Said(str(exc), warning=True)
        return
    finally:
        agent.changes.clear()
    yield TurnEnded("goal", goal, reply, usage)
    yield from parts.count(usage, "auto")
    yield from _remember(parts, goal, reply, usage)
    if agent.refused:
        count = len(agent.refused)
        yield Said(f"{count} command{'s' if count > 1 else ''} of the agent's did not run")
        agent.refused.clear()


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
    from conch.shell.turns import Reply

    prompt = parts.context.ask(GOAL_PREFIX + goal)
    sent = parts.context.turns[-1].content
    parts.context.answer(reply)
    yield from parts.save_turn(f":auto {goal}", Reply(reply, sent, usage, prompt.eviction, ()))
    if prompt.eviction is not None:
        yield Said(prompt.eviction.notice)
