"""Execution modes: how much the agent may run without asking the user.

- interactive: every command is asked about;
- restricted-autonomous: read-only commands run at once, the others are asked about, or
  refused when there is no one to ask (no confirmation callback);
- full-autonomous: everything runs without a question.

In every mode the safety policy comes first: a denylisted command (``rm -rf /``, a fork
bomb, ``curl ... | sh``) is refused, and so is a command safe mode cannot run without a
shell. Whether a command runs, is asked about or is refused is the one rule every action
follows, ``conch.policy.rules.decide``; what runs without a question runs contained
(``conch.execute.contain``).
"""

from __future__ import annotations

from conch.policy import ExecutionMode

__all__ = ["ExecutionMode", "describe", "parse_mode"]

_NAMES = {
    "interactive": ExecutionMode.INTERACTIVE,
    "restricted": ExecutionMode.RESTRICTED,
    "restricted-autonomous": ExecutionMode.RESTRICTED,
    "restricted_autonomous": ExecutionMode.RESTRICTED,
    "full": ExecutionMode.FULL,
    "full-autonomous": ExecutionMode.FULL,
    "full_autonomous": ExecutionMode.FULL,
}


def parse_mode(text: str | ExecutionMode) -> ExecutionMode:
    """The mode ``text`` names (``interactive``, ``restricted[-autonomous]``,
    ``full[-autonomous]``); ValueError for anything else."""
    if isinstance(text, ExecutionMode):
        return text
    mode = _NAMES.get(text.strip().lower())
    if mode is None:
        raise ValueError(
            f"unknown execution mode {text!r}: use interactive, restricted-autonomous or "
            "full-autonomous"
        )
    return mode


def describe(mode: ExecutionMode, can_ask: bool) -> str:
    """One sentence telling the model what ``mode`` lets it run."""
    if mode is ExecutionMode.INTERACTIVE:
        return (
            "The user is asked before every command runs."
            if can_ask
            else "No command can run: each one needs the user's yes, and no one can be asked."
        )
    if mode is ExecutionMode.RESTRICTED:
        rest = (
            "other commands run only after the user says yes."
            if can_ask
            else "other commands are refused (no one can be asked), so prefer read-only ones."
        )
        return f"Read-only commands run at once; {rest}"
    return "Commands run without asking; catastrophic ones are always refused."
