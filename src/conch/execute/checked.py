"""Running a checked command: the one call every surface makes to run what the policy allowed.

``run_checked`` refuses a command the policy rejects, asks the front end (its ``approve``
callback) when the confirmation rule says a question is needed, spawns the program from an
argv in safe mode or hands the text to the user's shell in unsafe mode, applies the timeout
and the output caps, and appends one line to the audit log. It never prints or reads the
terminal: the front end asks, the library decides and runs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conch.errors import ConfirmationRequired, PolicyRejection
from conch.execute.run import ExecResult, audit_line, expand_words, run_captured, run_interactive
from conch.policy import Decision, PolicyContext, Verdict, assess, simple_words
from conch.policy.confirm import Confirmation

AUDIT_LOG = "audit.log"

# The front end's answer to "run this?": the command to run (the one shown, or the user's
# edit of it, which is checked again), or None to run nothing.
Approve = Callable[[str, Verdict, Confirmation], str | None]
# The confirmation rule for a verdict (``conch.policy.confirm.confirmation`` with the
# front end's flags and the prompt config's programs).
Rule = Callable[[Verdict], Confirmation]


@dataclass(frozen=True, slots=True)
class Ran:
    """A command that ran: the text that ran (after any edit), its verdict, how it ended."""

    command: str
    verdict: Verdict
    result: ExecResult
    asked: bool


def run_checked(
    command: str,
    context: PolicyContext,
    *,
    cwd: Path,
    state_dir: Path | None,
    approve: Approve,
    rule: Rule,
    shell: str = "/bin/sh",
    timeout: float | None = None,
    interactive: bool = True,
    verdict: Verdict | None = None,
    on_start: Callable[[str, Verdict], None] | None = None,
) -> Ran:
    """Check ``command`` under ``context``, confirm it as ``rule`` says, run it, audit it.

    PolicyRejection for a command the policy rejects (an edit included);
    ConfirmationRequired when ``approve`` answers None. A command ``approve`` edited is
    assessed again and always asked about again. ``verdict`` is the policy's verdict
    when the caller already has it. ``interactive`` runs the command on the user's terminal;
    otherwise its output is captured (capped). ``on_start`` hears the command just before it
    is spawned. The audit line goes to ``state_dir/audit.log`` (none when ``state_dir`` is
    None).
    """
    verdict = verdict or assess(command, context)
    asked = edited = False
    while True:
        _refuse_rejected(verdict)
        wanted = rule(verdict)
        if not (wanted.ask or edited):
            break
        asked = True
        answer = approve(command, verdict, Confirmation(True, wanted.explain))
        if answer is None:
            raise ConfirmationRequired("aborted; nothing ran")
        if answer == command:
            break
        # The user's edit is a new command: checked again, and always asked about again.
        command, verdict, edited = answer, assess(answer, context), True
    if on_start is not None:
        on_start(command, verdict)
    result = _spawn(command, context, cwd, shell, timeout, interactive)
    if state_dir is not None:
        append_audit(state_dir, audit_line(command, cwd, result))
    return Ran(command, verdict, result, asked)


def append_audit(state_dir: Path, line: str) -> None:
    """Append one line to ``state_dir/audit.log`` (created private); an audit log that cannot
    be written does not stop the command's result from reaching the user."""
    with contextlib.suppress(OSError):
        state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(state_dir / AUDIT_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as log:
            log.write(line + "\n")


def _refuse_rejected(verdict: Verdict) -> None:
    if verdict.decision is Decision.REJECT:
        reason = verdict.reasons[0] if verdict.reasons else "rejected by the safety policy"
        raise PolicyRejection(f"not running it: {reason}")


def _spawn(
    command: str,
    context: PolicyContext,
    cwd: Path,
    shell: str,
    timeout: float | None,
    interactive: bool,
) -> ExecResult:
    run = run_interactive if interactive else run_captured
    if context.unsafe:
        return run(shell_command=command, shell=shell, cwd=cwd, timeout=timeout)
    return run(expand_words(simple_words(command), cwd), cwd=cwd, timeout=timeout)
