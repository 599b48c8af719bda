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


def context_for(
    prompt: PromptConfig, unsafe: bool = False, cwd: Path | None = None
) -> PolicyContext:
    """The policy context of a request made with ``prompt``: its allowed programs (none: any
    program), unsafe mode, and the working directory paths are resolved against."""
    allowed = frozenset(program.name for program in prompt.tools)
    return PolicyContext(unsafe=unsafe, allowed_tools=allowed or None, cwd=cwd)


def forced_explain(verdict: Verdict, programs: Sequence[AllowedProgram]) -> bool:
    """True when a program the command runs is allowed only with an explanation."""
    used = set(verdict.commands)
    return any(program.force_explain and program.name in used for program in programs)


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
    forced = forced_explain(verdict, programs)
    ask = (
        not programs
        or confirm
        or explain
        or unsafe
        or forced
        or verdict.decision is Decision.CONFIRM
    )
    return Confirmation(ask=ask, explain=forced)
