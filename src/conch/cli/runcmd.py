"""``conch run "instruction"`` and ``conch run --plan FILE``: the agent works through one
task. Progress goes to stderr (the agent's checklist, one line per tool call), the final
answer to stdout, and the exit status says how it ended (``conch help run``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from conch.agent.events import IterationLimit
from conch.cli import ui
from conch.cli.agentlog import TurnLog
from conch.cli.agentmetrics import metrics_for, report_window
from conch.cli.agentsetup import Refusals, model_name, open_session, setup_from
from conch.cli.agentview import (
    TurnView,
    checklist_changes,
    checklist_item,
    checklist_summary,
)
from conch.cli.environment import Environment
from conch.cli.parsing import USAGES, Parser, add_agent_flags, add_report_flags
from conch.cli.status import ExitStatus
from conch.errors import InputError, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from conch.agent.events import AgentEvent
    from conch.agent.session import Session
    from conch.tools.plan import PlanItem, PlanState

# Model replies one task may take: a task takes more steps than a chat turn.
RUN_ITERATIONS = 20
_WHY = {
    "policy": "the safety policy refused it",
    "declined": "you said no",
    "unasked": "it needed a yes and there was no terminal to ask on",
}


def build_run_parser() -> argparse.ArgumentParser:
    """The parser of ``conch run``."""
    p = Parser(
        prog="conch run",
        usage=USAGES["run"],
        description="Let the agent work through a task: progress on stderr, the answer on stdout.",
        epilog="`conch help run` has plan files and exit codes.",
    )
    p.add_argument("instruction", nargs="*", metavar="INSTRUCTION", help="the task, in quotes")
    p.add_argument("--plan", metavar="FILE", help="a task file: YAML, JSON or Markdown")
    add_agent_flags(p, RUN_ITERATIONS, act=True)
    add_report_flags(p)
    return p


def run_task(args: argparse.Namespace, env: Environment) -> int:
    """Run one task to its answer; the exit status is 0, or 3/4 when a command was
    refused, or 6 when the agent stopped without an answer."""
    instruction = " ".join(args.instruction).strip()
    if args.plan is not None and args.instruction:
        raise UsageError("give an instruction or --plan FILE, not both")
    if args.plan is None and not instruction:
        raise UsageError(
            'no task given; try: conch run "add a README for this project" or '
            "conch run --plan plan.yaml"
        )
    setup = setup_from(args, env, "restricted")
    goal, prompt = _task(args.plan, env) if args.plan is not None else (instruction, instruction)
    view = TurnView(env, None, quiet=args.quiet)
    metrics = metrics_for(args, env.cwd, lambda text: view.line(text, dim=True))
    from conch.tools.plan import PlanState

    shown: list[tuple[PlanItem, ...]] = [()]

    def plan_changed(items: tuple[PlanItem, ...]) -> None:
        for line in checklist_changes(shown[0], items):
            view.line(line)
        shown[0] = items

    plan = PlanState(on_change=plan_changed)
    refusals = Refusals()
    confirm = None
    if env.open_terminal() is not None:
        from conch.cli.confirm import agent_approver

        confirm = agent_approver(env, view.pause)
    session, loaded = open_session(args, env, setup, confirm=confirm, refusals=refusals, plan=plan)
    bash = f"bash in {setup.mode} mode" if setup.bash else "no bash"
    header = ui.paint(env, f"conch run: {_one_line(goal)}", "1") + ui.paint(
        env, f"  ({model_name(loaded)}; {setup.root}; {bash})", "2"
    )
    log = TurnLog(env, ["conch", *args.argv], loaded)
    try:
        report_window(metrics, loaded)
        metrics.begin(goal)
        with log.turn(goal):
            on_event = log.tee(metrics.tee(view.on_event))
            log.code = _work(env, session, view, plan, refusals, log, on_event, header, prompt)
    finally:
        metrics.close()
    return log.code


def _work(
    env: Environment,
    session: Session,
    view: TurnView,
    plan: PlanState,
    refusals: Refusals,
    log: TurnLog,
    on_event: Callable[[AgentEvent], None],
    header: str,
    prompt: str,
) -> int:
    """Run the task on ``session`` (its events to ``on_event``), print its answer, return
    the exit status."""
    with session:
        view.n_ctx = session.context_tokens
        view.line(header)
        view.begin()
        try:
            reply = session.chat(prompt, on_event=on_event)
        except IterationLimit as exc:
            view.pause()
            env.stderr.write(
                f"conch: {exc}; give it more with --max-iterations, or split the task\n"
            )
            log.notes.append(str(exc))
            return ExitStatus.AGENT_STOPPED
        finally:
            view.pause()
    if plan.items:
        view.line(checklist_summary(plan.items))
        for item in plan.items:
            view.line(checklist_item(item))
    env.stdout.write(reply.rstrip("\n") + "\n")
    env.stdout.flush()
    code = refusals.status()
    if code != ExitStatus.OK:
        count = len(refusals.seen)
        reasons = sorted({_WHY[why] for _, why in refusals.seen})
        message = (
            f"{count} command{'s' if count > 1 else ''} the agent proposed did not "
            f"run ({'; '.join(reasons)}); the task may be unfinished"
        )
        env.stderr.write(f"conch: {message}\n")
        log.notes.append(message)
    return code


def _task(name: str, env: Environment) -> tuple[str, str]:
    """The goal and the prompt of the task file ``name``."""
    from conch.agent.task import load_task, task_prompt

    path = env.cwd / Path(name).expanduser()
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise InputError(
            f"plan file {name} {what}; give a YAML, JSON or Markdown task file "
            "(`conch help run` shows one)"
        )
    task = load_task(path)
    return task.goal, task_prompt(task)


def _one_line(text: str, width: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
