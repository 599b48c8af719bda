"""When a command needs the user's yes: one rule for every surface.

The policy's verdict says whether a command may run at all (``assess``); this rule says
whether the front end must ask before it runs, and whether it must explain the command first.
Front ends ask however they ask (a terminal prompt, an HTTP round trip); the rule is here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conch.config.settings import AllowedProgram, PromptConfig
from conch.errors import PolicyRejection
from conch.policy import Decision, PolicyContext, Risk, Verdict
from conch.policy.plan import plan
from conch.policy.rules import Action, ExecutionMode, Kind, Outcome, Permissions, Ruling, decide


@dataclass(frozen=True, slots=True)
class Confirmation:
    """What the rule asks of the front end for one verdict: ``ask`` before running, and
    ``explain`` the command first (a program of the command requires it: ``force_explain``)."""

    ask: bool
    explain: bool = False
    forced_by: tuple[str, ...] = ()  # the programs whose ``force_explain`` set ``explain``
    # Why the question is asked (``conch.policy.rules.Ruling.reasons``), the permission rule
    # that decided, if one did, whether it is asked only because no sandbox can hold the
    # command here, and whether the command destroys or needs root (a front end may want a
    # typed "yes" for those).
    reasons: tuple[str, ...] = ()
    rule: str | None = None
    uncontained: bool = False
    severe: bool = False
    # The pattern an "always, for this session" answer would allow (``Answer.always``), for a
    # surface that keeps such answers; None where it does not.
    always: str | None = None
    # What the action changes, for the front end to show before asking (a file write's diff).
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ConfirmOptions:
    """What a surface's user chose about questions, and the programs a prompt config allows.

    ``confirm``: always ask. ``explain``: explain every command first (so ask, too).
    ``programs``: the prompt config's allowed programs (empty: no whitelist, so always ask);
    a program with ``force_explain`` is explained and asked about whenever it runs.
    Unsafe mode is not here: it is the policy context's (``PolicyContext.unsafe``).
    """

    confirm: bool = False
    explain: bool = False
    programs: tuple[AllowedProgram, ...] = ()
    # The surface's execution mode (None: the one-shot's rule, see ``command_ruling``) and
    # the user's permission rules.
    mode: ExecutionMode | None = None
    permissions: Permissions | None = None


def context_for(
    prompt: PromptConfig, unsafe: bool = False, cwd: Path | None = None
) -> PolicyContext:
    """The policy context of a request made with ``prompt``: its allowed programs (none: any
    program), whether safe mode runs pipelines (``PromptConfig.pipelines``), unsafe mode, and
    the working directory paths are resolved against."""
    allowed = frozenset(program.name for program in prompt.tools)
    return PolicyContext(
        unsafe=unsafe, allowed_tools=allowed or None, cwd=cwd, pipelines=prompt.pipelines
    )


def forced_explain(verdict: Verdict, programs: Sequence[AllowedProgram]) -> bool:
    """True when a program the command runs is allowed only with an explanation."""
    return bool(explaining(verdict, programs))


def explaining(verdict: Verdict, programs: Sequence[AllowedProgram]) -> tuple[str, ...]:
    """The programs of the command that are allowed only with an explanation, in order."""
    forced = {program.name for program in programs if program.force_explain}
    return tuple(name for name in dict.fromkeys(verdict.commands) if name in forced)


def command_ruling(
    command: str,
    verdict: Verdict,
    options: ConfirmOptions,
    *,
    mode: ExecutionMode,
    unsafe: bool = False,
    contain: bool = True,
) -> Ruling:
    """The one rule (``conch.policy.rules.decide``) for running ``command``, judged
    ``verdict``, with a surface's ``options``. ``mode``: the surface's execution mode, used
    when ``options.mode`` does not set one; a surface without one (the one-shot command) asks
    for everything unless its prompt config lists the programs it allows."""
    effective = options.mode or (mode if options.programs else ExecutionMode.INTERACTIVE)
    parts, whole = command_parts(command)
    action = Action(
        Kind.COMMAND,
        command,
        risk=verdict.risk,
        rejected=verdict.decision is Decision.REJECT,
        reasons=verdict.reasons,
        parts=parts,
        whole=whole,
    )
    return decide(
        action,
        effective,
        permissions=options.permissions,
        confirm=options.confirm,
        explain=options.explain,
        unsafe=unsafe,
        forced_explain=explaining(verdict, options.programs),
        contain=contain,
    )


def command_parts(command: str) -> tuple[tuple[str, ...], bool]:
    """What permission patterns match of ``command``: each program it runs with its
    arguments, one per stage, the program by its name (``/bin/rm -r x`` is ``rm -r x``), and
    whether those are all it runs (False for what runs through a shell: only its whole text
    is known, so no ``allow`` rule can apply)."""
    try:
        made = plan(command)
    except PolicyRejection:
        return (" ".join(command.split()),), False
    parts = []
    for step in made.steps:
        for stage in step.stages:
            words = [w.text for w in stage.words]
            if words:
                words[0] = words[0].rsplit("/", 1)[-1]
                parts.append(" ".join(words))
    return tuple(parts), True


def asked(ruling: Ruling, verdict: Verdict, programs: Sequence[AllowedProgram]) -> Confirmation:
    """What the front end is told when ``ruling`` asks about ``verdict``'s command."""
    forced_by = explaining(verdict, programs)
    return Confirmation(
        ask=ruling.outcome is Outcome.ASK,
        explain=ruling.explain,
        forced_by=forced_by,
        reasons=ruling.reasons,
        rule=ruling.rule,
        uncontained=ruling.uncontained,
        severe=verdict.risk in (Risk.DESTRUCTIVE, Risk.PRIVILEGED),
    )


def confirmation(
    verdict: Verdict,
    programs: Sequence[AllowedProgram] = (),
    *,
    confirm: bool = False,
    explain: bool = False,
    unsafe: bool = False,
) -> Confirmation:
    """Whether running ``verdict``'s command needs a question, and an explanation first,
    for a surface without an execution mode of its own (``command_ruling``): asked unless
    the prompt config allows a fixed list of ``programs``, the policy allows the command
    outright, and nothing the user chose asks. A rejected command is never asked about."""
    options = ConfirmOptions(confirm, explain, tuple(programs))
    mode = ExecutionMode.RESTRICTED
    if verdict.decision is not Decision.ALLOW and not unsafe:
        # The verdict already holds the mode's answer: a command it asks about is asked.
        mode = ExecutionMode.INTERACTIVE
    ruling = command_ruling("", verdict, options, mode=mode, unsafe=unsafe)
    if ruling.outcome is Outcome.REFUSE:
        return Confirmation(ask=False)
    return asked(ruling, verdict, programs)
