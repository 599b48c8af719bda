"""conch's safety policy: one pure function deciding whether a shell command may run.

``assess`` parses the command with tree-sitter-bash, finds every program it would run
(nested shells, substitutions and wrappers such as ``sudo`` or ``xargs`` included), and
returns a Verdict: allow, confirm or reject, with the reasons. In safe mode a command that
needs a real shell (a loop, ``$(...)``, a here-document...) is judged like any other and runs
through a shell (``Verdict.needs_shell``), contained when nobody is asked; what the policy
cannot see or judge in it stays refused (``conch.policy.shell``). See docs/policy.md.
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
from conch.policy.denylist import catastrophes
from conch.policy.evaluated import evaluated
from conch.policy.loops import readings as loop_readings
from conch.policy.loops import split_at_run_time as loop_splits
from conch.policy.model import Analysis
from conch.policy.plan import plan, simple_words
from conch.policy.planned import analyse_plan
from conch.policy.readings import readings, textual_catastrophe
from conch.policy.rules import ExecutionMode, Outcome, mode_outcome
from conch.policy.sandbox import outside_workspace, path_args, sandbox_violations
from conch.policy.shell import (
    code_runner,
    directory_change,
    extra_risks,
    refusals,
    text_refusals,
    through_shell,
    unset_variables,
)

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
    # Rejected only for what safe mode will not run (text that does not parse, code the
    # policy cannot see, a path only known at run time given to a program that destroys):
    # unsafe mode would run it, after asking.
    needs_unsafe: bool = False
    # The risk of each program and redirection found, deduplicated (``risk`` is the highest):
    # what a contained run is shaped by.
    risks: tuple[Risk, ...] = ()
    # Runs through a shell: safe mode cannot run it as a plan of programs (a loop, ``$(...)``,
    # a here-document...), so it runs as ``sh -c`` (contained when nobody is asked, in the
    # user's shell after a yes); unsafe mode runs everything through the user's shell.
    needs_shell: bool = False

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
            "needs_shell": self.needs_shell,
        }


_NEEDS_SHELL = (
    "{why}: safe mode runs it only where it can check every program the shell would run "
    "(a prompt config that lists programs: never); unsafe mode runs your shell and always "
    "asks first."
)
_ONE_PROGRAM = (
    "Disallowed shell operator {op!r}: this prompt config allows one program at a time "
    "(allow_pipelines: true allows pipes and lists); unsafe mode allows operators and always "
    "asks first."
)
_REFUSED_IN_SHELL = (
    "{why} Safe mode does not run it; unsafe mode runs your shell and always asks first."
)


def _shell_need(command: str, analysis: Analysis, context: PolicyContext) -> tuple[str, bool]:
    """What in ``command`` needs a real shell (empty: nothing), and whether the command itself
    does (True: it runs as ``sh -c``) or only shell code one of its programs runs (``bash -c``:
    conch spawns that shell as it spawns any program)."""
    try:
        plan(command, context.environ, cwd=context.cwd, root=context.sandbox_root)
    except PolicyRejection as exc:
        return str(exc), True
    nested = tuple(dict.fromkeys(analysis.nested_operators))
    if nested:
        return f"a program runs shell code using {', '.join(nested)}", False
    if analysis.nested_needs:
        return f"a program runs shell code: {analysis.nested_needs[0]}", False
    return "", False


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


def _views(command: str, analysis: Analysis) -> list[Analysis]:
    """What the checks judge: ``analysis``, or each reading of the command with its ``for``
    loops' variables replaced by their words (``conch.policy.loops.readings``), when every
    reading parses."""
    if analysis.failures or analysis.unknowable:
        return [analysis]
    unrolled = [_analyse(reading) for reading in loop_readings(command)]
    if not unrolled or any(view.failures or view.unknowable for view in unrolled):
        return [analysis]
    return unrolled


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


def _once(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


# Risks whose paths cannot be told apart into what is read and what is changed.
_CHANGES_ANY_PATH = frozenset({Risk.DESTRUCTIVE, Risk.PRIVILEGED, Risk.UNKNOWN})


def _outside(risk: Risk, paths: list[str], context: PolicyContext) -> str | None:
    """In full-autonomous mode, a path outside the working directory of a command that may
    change any path it names: run unasked it would be contained to the working directory, so
    it is asked about instead (and what the denylist missed never runs outright there)."""
    if context.mode is not ExecutionMode.FULL or risk not in _CHANGES_ANY_PATH:
        return None
    return outside_workspace(paths, context.cwd)


def assess(command: str, context: PolicyContext = PolicyContext()) -> Verdict:
    """Judge ``command`` under ``context``. Pure apart from resolving paths for the sandbox."""
    analysis = _analyse(command, context)
    views = _views(command, analysis)
    commands = _names(analysis)
    operators = tuple(dict.fromkeys(analysis.operators))
    paths = _once([p for view in views for p in path_args(view, context.cwd)])
    risks = [classify(inv) for view in views for inv in view.invocations]
    risks += [redirect_risk(r) for view in views for r in view.redirects]
    risks += [risk for view in views for risk, _why in extra_risks(view)]
    evaluation = evaluated(command, analysis)  # data bash runs as code: never without a question
    if analysis.failures or analysis.unknowable or evaluation.hidden:
        risks.append(Risk.UNKNOWN)
    risk = highest(risks)

    denied = catastrophes(analysis)
    for view in views:
        denied += [why for why in catastrophes(view) if why not in denied]
    for reading in readings(command, analysis):
        denied += [why for why in catastrophes(_analyse(reading)) if why not in denied]
    denied += [why for why in evaluation.denied if why not in denied]
    if analysis.failures and not denied and textual_catastrophe(command):
        denied.append(
            "Denylisted: the unparsable text looks like a catastrophic command. "
            "This is never allowed, not even in unsafe mode."
        )
    note = ""  # how safe mode runs it, said after any reason it may not
    reasons: list[str] = list(denied)
    reject = bool(denied)

    needs_shell = context.unsafe
    relaxable = list(dict.fromkeys(analysis.failures)) + list(dict.fromkeys(analysis.unknowable))
    relaxable += evaluation.hidden
    if context.unsafe:
        relaxable = [f"{r} (unsafe mode: asking for confirmation instead)" for r in relaxable]
        reasons += [f"Shell operator {op!r} allowed in unsafe mode." for op in operators]
    elif relaxable:
        reject = True
    elif operators and not context.pipelines:
        reasons += [_ONE_PROGRAM.format(op=op) for op in operators]
        reject = True
    else:
        why, top = _shell_need(command, analysis, context)
        # A loop read as its words (every use of its variable followed) is judged as those
        # words: ``for f in *.txt; do mv "$f" "${f%.txt}.md"; done`` as ``mv *.txt *.md``.
        # A program that destroys a path only known at run time is refused as written, and
        # so is one given a glob's names unquoted (they split at their blanks).
        judged = [analysis, *views] if loop_splits(command) else views
        refused = _once([r for view in judged for r in refusals(view)]) if why else []
        if why and context.environ is not None:
            refused = unset_variables(command, analysis, context.environ) + refused
        if why:
            refused += text_refusals(command)
        moved = directory_change(analysis) if why and context.sandbox_root else None
        if moved:
            refused.append(
                f"After {moved!r} in a shell, paths are read from a directory the sandbox-root "
                "check cannot follow."
            )
        runner = None if top else code_runner(analysis)
        if why and (context.allowed_tools or runner):
            # A prompt config that lists programs runs those programs, not a shell; shell
            # code that ``parallel`` or ``watch`` builds is only known when they run it.
            if runner:
                why = f"{why} ({runner} builds it)"
            reasons.append(_NEEDS_SHELL.format(why=why.rstrip(".")))
            reject = True
        elif refused:
            reasons += [_REFUSED_IN_SHELL.format(why=r) for r in refused]
            reject = True
        elif why:
            note = through_shell(why)
            needs_shell = top
        elif operators:
            note = f"Runs without a shell: conch does {', '.join(operators)} itself."
    reasons += relaxable

    hard: list[str] = []
    if not (analysis.invocations or analysis.redirects or analysis.failures or operators):
        hard.append("No command found to run.")
    if context.allowed_tools:
        hard += _once([r for view in views for r in _whitelist(view, context.allowed_tools)])
    if context.sandbox_root is not None:
        hard += _once(
            [
                reason
                for view in views
                for reason in sandbox_violations(view, paths, context.sandbox_root, context.cwd)
            ]
        )
    reasons += hard
    reject = reject or bool(hard)

    needs_unsafe = reject and not (context.unsafe or denied or hard)
    if note:  # how it would run: after the reasons it may not, which come first
        reasons.append(note)
    if reject:
        decision = Decision.REJECT
        needs_shell = False
    elif context.unsafe:
        decision = Decision.CONFIRM
        reasons.append("Confirmation required (unsafe mode).")
    elif mode_outcome(context.mode, risk) is Outcome.RUN and not _outside(risk, paths, context):
        decision = Decision.ALLOW
    elif outside := _outside(risk, paths, context):
        decision = Decision.CONFIRM
        reasons.append(
            f"It changes things and names {outside!r}, outside the working directory, where "
            "a command run without a question cannot write; so it is asked about."
        )
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
        needs_shell=needs_shell,
    )
