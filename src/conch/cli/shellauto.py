"""Autonomous mode of ``conch shell``: the agent works toward a goal with its tools.

``:auto GOAL`` hands GOAL to a ``conch.Session`` with the bash tool and the plan tool (and
the file tools, confined to the shell's directory), as ``conch run`` does, in
restricted-autonomous mode: a read-only command runs at once, any other waits for the
user's yes, and a destructive or privileged one HALTs until the user types ``yes`` (in
every mode). The policy checks every step first; a command the user refused is not run
again in the same autonomous session (the agent is told so). A step limit
(``--max-steps``) ends a goal that does not finish; Ctrl+C stops it and returns to the prompt.

The commands the agent ran reach the shell's context like typed ones, and the goal and the
agent's answer become a turn of the conversation.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from conch.cli import ui
from conch.cli.agentsetup import Refusals
from conch.cli.agentview import checklist_changes
from conch.cli.shellparts import ShellParts
from conch.errors import ConchError
from conch.messages import Finished, Usage

if TYPE_CHECKING:
    from conch.agent.events import AgentEvent
    from conch.agent.session import Session
    from conch.execute.checked import Answer, Approve
    from conch.policy import Verdict
    from conch.policy.confirm import Confirmation
    from conch.tools.plan import PlanItem

HALT_QUESTION = "Type yes to run it; anything else refuses it: "
GOAL_PREFIX = "[auto] "


class AutoAgent:
    """The agent of autonomous mode, kept across goals (with the commands the user refused)
    while the shell stays in the same directory and on the same model."""

    def __init__(self, parts: ShellParts) -> None:
        from conch.agent.builtin import ToolOptions
        from conch.agent.loop import Limits
        from conch.agent.session import Session
        from conch.cli.confirm import agent_approver
        from conch.policy import ExecutionMode
        from conch.policy.rules import permissions_from
        from conch.tools.plan import PlanState

        self.parts = parts
        self.root = parts.state.cwd
        self.refusals = Refusals()
        self._shown: tuple[PlanItem, ...] = ()
        plan = PlanState(on_change=self._plan_changed)
        tools = ToolOptions(
            root=Path(self.root),
            bash=True,
            mode=ExecutionMode.RESTRICTED,
            confirm=halting_approver(parts, agent_approver(parts.env, parts.view.pause)),
            evaluate=False,
            plan_state=plan,
            on_refused=self.refusals,
            permissions=permissions_from(parts.loaded.settings.permissions),
            pass_env=tuple(parts.loaded.settings.execution.pass_env),
        )
        ai = parts.choice.ai
        self.session: Session = Session(
            parts.provider,
            tools=tools,
            tool_calls=ai.tool_calls,
            options=parts.options,
            limits=Limits(max_iterations=parts.args.max_steps),
            context_tokens=ai.local.n_ctx if ai.provider == "local" else 4096,
        )
        servers = parts.mcp_servers()
        if servers is not None:  # the shell owns them: they outlive this agent
            self.session.with_mcp(servers, close=False)

    def _plan_changed(self, items: tuple[PlanItem, ...]) -> None:
        for line in checklist_changes(self._shown, items):
            self.parts.view.line(line)
        self._shown = items


def run_goal(parts: ShellParts, goal: str) -> None:
    """Let the agent work toward ``goal``; its answer is shown and becomes a turn."""
    from conch.agent.events import IterationLimit, TurnFinished

    agent = parts.auto
    if not isinstance(agent, AutoAgent) or agent.root != parts.state.cwd:
        agent = parts.auto = AutoAgent(parts)
    view = parts.view
    usage = [Usage()]
    log = parts.turn_log()

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, Finished):
            usage[0] = Usage(
                usage[0].prompt_tokens + event.usage.prompt_tokens,
                usage[0].completion_tokens + event.usage.completion_tokens,
            )
        _record(parts, event)
        log.on_event(event)
        view.on_event(event)

    view.line(ui.paint(parts.env, f"conch: working toward: {goal}", "1"))
    view.begin()
    try:
        with log.turn(goal):
            reply = agent.session.chat(goal, on_event=on_event)
            log.code = 0
    except KeyboardInterrupt:
        view.on_event(TurnFinished("", 0))
        parts.say("stopped; back to the prompt")
        return
    except IterationLimit as exc:
        view.on_event(TurnFinished("", 0))
        parts.warn(f"{exc}; give it more with --max-steps, or split the goal")
        return
    except ConchError as exc:
        view.on_event(TurnFinished("", 0))
        parts.warn(str(exc))
        return
    finally:
        parts.count(usage[0], "auto")
    view.on_event(TurnFinished(reply, 0))
    _remember(parts, goal, reply, usage[0])
    if agent.refusals.seen:
        count = len(agent.refusals.seen)
        parts.say(f"{count} command{'s' if count > 1 else ''} of the agent's did not run")
        agent.refusals.seen.clear()


def halting_approver(parts: ShellParts, ask: Approve) -> Approve:
    """The question before an agent's command: ``ask``'s (run it? y/N), except that a
    destructive or privileged command HALTs for a typed ``yes``."""

    def approve(command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        from conch.execute.checked import Answer

        if not wanted.severe:  # the rule marks what destroys or needs root
            return ask(command, verdict, wanted)
        env = parts.env
        parts.view.pause()
        heading = f"HALT: the agent wants to run a {verdict.risk} command:"
        ui.show_command(env, command, verdict.risk.value, verdict.reasons, [heading])
        terminal = env.open_terminal()
        if terminal is None:
            env.stderr.write("  refused: no terminal to type yes on\n")
            return Answer.abort()
        env.stderr.write(HALT_QUESTION)
        env.stderr.flush()
        if terminal.readline().strip() == "yes":
            return Answer.run()
        env.stderr.write("  not run; the agent is told you said no\n")
        env.stderr.flush()
        return Answer.abort()

    return approve


def _record(parts: ShellParts, event: AgentEvent) -> None:
    """A command the agent ran reaches the shell's context like a typed one: the command
    that ran, its exit code and what it printed."""
    from conch.agent.events import ToolFinished

    if not isinstance(event, ToolFinished) or event.ran is None:
        return
    ran = event.ran
    if parts.settings.capture_output:
        parts.context.record(ran.command, ran.exit_code, ran.output)
    parts.save(
        {"type": "exec", "command": ran.command, "exit_code": ran.exit_code, "source": "auto"}
    )


def _remember(parts: ShellParts, goal: str, reply: str, usage: Usage) -> None:
    """The goal and the agent's answer as a turn of the shell's conversation."""
    from conch.shell.turns import Reply

    prompt = parts.context.ask(GOAL_PREFIX + goal)
    sent = parts.context.turns[-1].content
    parts.context.answer(reply)
    parts.save_turn(f":auto {goal}", Reply(reply, sent, usage, prompt.eviction, ()))
    if prompt.eviction is not None:
        parts.say(prompt.eviction.notice)
