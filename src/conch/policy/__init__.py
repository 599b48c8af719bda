"""conch's safety policy: one pure function deciding whether a shell command may run.

``assess`` parses the command with tree-sitter-bash, finds every program it would run
(nested shells, substitutions and wrappers such as ``sudo`` or ``xargs`` included), and
returns a Verdict: allow, confirm or reject, with the reasons. See docs/policy.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from conch.errors import PolicyRejection
from conch.policy.classify import Risk, classify, highest, redirect_risk
from conch.policy.commands import analyse
from conch.policy.denylist import catastrophes, readings, textual_catastrophe
from conch.policy.model import Analysis
from conch.policy.plan import analyse_plan, plan, simple_words
from conch.policy.rules import ExecutionMode, Outcome, mode_outcome
from conch.policy.sandbox import path_args, sandbox_violations

__all__ = [
    "Decision",
    "ExecutionMode",
    "PolicyContext",
    "Risk",
    "Verdict",
    "assess",
    "simple_words",
]


class Decision(StrEnum):
    """What the caller should do with a command."""

    ALLOW = "allow"
    CONFIRM = "confirm"
    REJECT = "reject"


@dataclass(frozen=True, slots=True)
class PolicyContext:
    """The user's settings that the policy takes into account."""

    unsafe: bool = False
    allowed_tools: frozenset[str] | None = None  # None or empty: no whitelist
    mode: ExecutionMode = ExecutionMode.RESTRICTED
    cwd: Path | None = None
    sandbox_root: Path | None = None  # when set, every path must resolve inside it
    # Safe mode runs pipelines, lists and file redirections itself, without a shell; False
    # (a prompt config that lists programs, without ``allow_pipelines``) allows one program.
    pipelines: bool = True
    # The environment the command runs with (``conch.execute.environ``): safe mode expands
    # its variables, and braces, itself, and the policy judges the expanded words. None:
    # variables and braces need a shell.
    environ: Mapping[str, str] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The policy's answer for one command."""

    decision: Decision
    risk: Risk  # the highest risk of any command found
    reasons: tuple[str, ...]
    commands: tuple[str, ...]  # every base command that would run, in order, deduplicated
    operators: tuple[str, ...]
    paths: tuple[str, ...]
    denylisted: bool = False
    # Rejected only for what needs a real shell (operators, words that expand at run time,
    # text that does not parse): unsafe mode would run it, after asking.
    needs_unsafe: bool = False
    # The risk of each program and redirection found, deduplicated (``risk`` is the highest):
    # what a contained run is shaped by.
    risks: tuple[Risk, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (for ``--json`` output and history)."""
        return {
            "decision": str(self.decision),
            "risk": str(self.risk),
            "reasons": list(self.reasons),
            "commands": list(self.commands),
            "operators": list(self.operators),
            "paths": list(self.paths),
            "denylisted": self.denylisted,
        }


_NEEDS_SHELL = (
    "{why}: safe mode runs programs, joined by |, &&, || or ; and with file redirections, "
    "without a shell; unsafe mode runs your shell and always asks first."
)
_ONE_PROGRAM = (
    "Disallowed shell operator {op!r}: this prompt config allows one program at a time "
    "(allow_pipelines: true allows pipes and lists); unsafe mode allows operators and always "
    "asks first."
)


def _shell_free(command: str, analysis: Analysis, context: PolicyContext) -> list[str]:
    """Why safe mode cannot run ``command`` itself (empty: it can)."""
    operators = tuple(dict.fromkeys(analysis.operators))
    if operators and not context.pipelines:
        return [_ONE_PROGRAM.format(op=op) for op in operators]
    nested = tuple(dict.fromkeys(analysis.nested_operators))
    if nested:
        why = f"The command hands shell code using {', '.join(nested)} to a shell"
        return [_NEEDS_SHELL.format(why=why)]
    if analysis.nested_needs:
        why = f"The command hands a shell code that needs one ({analysis.nested_needs[0]})"
        return [_NEEDS_SHELL.format(why=why)]
    try:
        plan(command, context.environ, cwd=context.cwd, root=context.sandbox_root)
    except PolicyRejection as exc:
        return [_NEEDS_SHELL.format(why=str(exc).rstrip("."))]
    return []


def _analyse(command: str, context: PolicyContext | None = None) -> Analysis:
    try:
        if context is not None and not context.unsafe:
            # Safe mode judges the words that will run, after conch's own expansions.
            planned = analyse_plan(
                command, context.environ, cwd=context.cwd, root=context.sandbox_root
            )
            if planned is not None:
                return planned
        return analyse(command)
    except RecursionError:
        # Nesting deep enough to exhaust the stack is rejected like any parse failure.
        failed = Analysis()
        failed.failures.append(
            "The policy could not parse the command: it is nested too deeply to check."
        )
        return failed


def _names(analysis: Analysis) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i.name for i in analysis.invocations if i.name is not None))


def _whitelist(analysis: Analysis, allowed: frozenset[str]) -> list[str]:
    listed = ", ".join(sorted(allowed))
    reasons: list[str] = []
    for inv in analysis.invocations:
        name = inv.name if inv.name is not None else inv.raw_name
        if inv.name not in allowed and inv.raw_name not in allowed:
            reason = f"Disallowed command {name!r}. Allowed tools: {listed}"
            if reason not in reasons:
                reasons.append(reason)
    return reasons


def assess(command: str, context: PolicyContext = PolicyContext()) -> Verdict:
    """Judge ``command`` under ``context``. Pure apart from resolving paths for the sandbox."""
    analysis = _analyse(command, context)
    commands = _names(analysis)
    operators = tuple(dict.fromkeys(analysis.operators))
    paths = path_args(analysis, context.cwd)
    risks = [classify(inv) for inv in analysis.invocations]
    risks += [redirect_risk(r) for r in analysis.redirects]
    if analysis.failures or analysis.unknowable:
        risks.append(Risk.UNKNOWN)
    risk = highest(risks)

    denied = catastrophes(analysis)
    for reading in readings(command, analysis):
        denied += [why for why in catastrophes(_analyse(reading)) if why not in denied]
    if analysis.failures and not denied and textual_catastrophe(command):
        denied.append(
            "Denylisted: the unparsable text looks like a catastrophic command. "
            "This is never allowed, not even in unsafe mode."
        )
    reasons: list[str] = list(denied)
    reject = bool(denied)

    relaxable = list(dict.fromkeys(analysis.failures)) + list(dict.fromkeys(analysis.unknowable))
    if context.unsafe:
        relaxable = [f"{r} (unsafe mode: asking for confirmation instead)" for r in relaxable]
        reasons += [f"Shell operator {op!r} allowed in unsafe mode." for op in operators]
    elif relaxable:
        reject = True
    else:
        shell = _shell_free(command, analysis, context)
        if shell:
            reasons += shell
            reject = True
        elif operators:
            reasons.append(f"Runs without a shell: conch does {', '.join(operators)} itself.")
    reasons += relaxable

    hard: list[str] = []
    if not (analysis.invocations or analysis.redirects or analysis.failures or operators):
        hard.append("No command found to run.")
    if context.allowed_tools:
        hard += _whitelist(analysis, context.allowed_tools)
    if context.sandbox_root is not None:
        hard += sandbox_violations(analysis, paths, context.sandbox_root, context.cwd)
    reasons += hard
    reject = reject or bool(hard)

    needs_unsafe = reject and not (context.unsafe or denied or hard)
    if reject:
        decision = Decision.REJECT
    elif context.unsafe:
        decision = Decision.CONFIRM
        reasons.append("Confirmation required (unsafe mode).")
    elif mode_outcome(context.mode, risk) is Outcome.RUN:
        decision = Decision.ALLOW
    else:
        # The one rule for actions (conch.policy.rules) decides; the verdict reports it.
        decision = Decision.CONFIRM
        if context.mode is ExecutionMode.INTERACTIVE:
            reasons.append("Confirmation required (interactive mode).")
        else:
            reasons.append(
                f"The command is {risk}, so it needs confirmation in {context.mode} mode."
            )
    return Verdict(
        decision=decision,
        risk=risk,
        reasons=tuple(reasons),
        commands=commands,
        operators=operators,
        paths=tuple(paths),
        denylisted=bool(denied),
        needs_unsafe=needs_unsafe,
        risks=tuple(dict.fromkeys(risks)),
    )
