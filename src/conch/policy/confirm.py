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
from conch.policy import Decision, PolicyContext, Verdict


@dataclass(frozen=True, slots=True)
class Confirmation:
    """What the rule asks of the front end for one verdict: ``ask`` before running, and
    ``explain`` the command first (a program of the command requires it: ``force_explain``)."""

    ask: bool
    explain: bool = False
    forced_by: tuple[str, ...] = ()  # the programs whose ``force_explain`` set ``explain``


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


def confirmation(
    verdict: Verdict,
    programs: Sequence[AllowedProgram] = (),
    *,
    confirm: bool = False,
    explain: bool = False,
    unsafe: bool = False,
) -> Confirmation:
    """Whether running ``verdict``'s command needs a question, and an explanation first.

    A rejected command never runs (no question can change that: the caller refuses it). Any
    other command is asked about unless every one of these holds: the prompt config allows a
    fixed list of ``programs`` (a whitelist the user wrote), the policy allows the command
    outright, and the user asked for no question and no explanation (``confirm``, ``explain``),
    is not in unsafe mode, and no program of the command requires an explanation.
    """
    if verdict.decision is Decision.REJECT:
        return Confirmation(ask=False)
    forced_by = explaining(verdict, programs)
    forced = bool(forced_by)
    ask = (
        not programs
        or confirm
        or explain
        or unsafe
        or forced
        or verdict.decision is Decision.CONFIRM
    )
    return Confirmation(ask=ask, explain=forced, forced_by=forced_by)
