"""``conch QUESTION``: a short answer in prose, with at most one suggested command, never run.

A request asked ABOUT something ("what does this error mean", "why does this fail") is answered
instead of given a command (``conch.command.oneshot``: ``conch.command.intent.classify``
decides); ``--answer`` and ``--command`` decide instead, and a flag that is about running a
command (``--print``, ``--yes``, ``--confirm``, ``--explain``) means a command is wanted.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from conch.cli.invocation import Run
from conch.cli.status import ExitStatus
from conch.errors import UsageError

if TYPE_CHECKING:
    from conch.command.oneshot import OneShotResult, Want

ANSWERED = "answered as a question"


def want_of(args: argparse.Namespace) -> Want:
    """What the flags ask for: ``--answer`` an answer (a usage error with a flag about
    running a command), ``--command`` and the flags about a command a command, else whatever
    the request asks for (``conch.command.intent`` decides)."""
    from conch.command.oneshot import Want

    command_flags = (
        ("--print", args.print_only),
        ("--yes", args.yes),
        ("--confirm", args.confirm),
        ("--explain", args.explain),
    )
    if args.force_answer:
        flag = next((flag for flag, on in command_flags if on), None)
        if flag is not None:
            raise UsageError(
                f"--answer cannot be combined with {flag}: an answer runs and prints no "
                "command of its own; drop one of them"
            )
        return Want.ANSWER
    if args.force_task or any(on for _, on in command_flags):
        return Want.COMMAND
    return Want.AUTO


def show_answer(state: Run, result: OneShotResult) -> int:
    """Print the answer (and the suggested command the policy allows) and return the exit
    status: 0, since nothing runs."""
    from conch.policy import Decision

    args, env = state.args, state.env
    answered = result.answer
    assert answered is not None
    state.notes.append(ANSWERED)
    state.command, state.verdict = answered.command, answered.verdict
    if args.json:
        env.stdout.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")
        return ExitStatus.OK
    if answered.text:
        env.stdout.write(answered.text.rstrip() + "\n")
    verdict = answered.verdict
    if answered.command is None or verdict is None:
        return ExitStatus.OK
    if verdict.decision is Decision.REJECT:
        reason = verdict.reasons[0] if verdict.reasons else "rejected by the safety policy"
        if not args.quiet:
            env.stderr.write(
                f"conch: note: the suggested command is left out; the safety policy rejects "
                f"it: {reason}\n"
            )
        return ExitStatus.OK
    env.stdout.write(("\n" if answered.text else "") + f"  {answered.command}\n")
    if not args.quiet:
        env.stderr.write(f"  risk: {verdict.risk.value} (suggested; conch did not run it)\n")
    return ExitStatus.OK
