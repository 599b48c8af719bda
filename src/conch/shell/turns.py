"""A model turn of ``conch shell``, and what the policy says of the commands it suggests.

``model_turn`` asks the model with the ``Context`` (the turns so far, and the output of the
commands that ran since the last question as ``[exec output]`` blocks), streams the events
of its reply (which ends where an ``[exec output]`` block would begin: the model never writes
a command's output itself), stores the reply and returns it with the commands it suggests. ``judge`` is the
safety policy's verdict on a suggested command: it would run in the user's own shell, so it
is judged as unsafe mode judges (shell syntax allowed, the denylist and parse failures
enforced); ``needs_yes`` says whether the user must be asked before it runs.
"""

from __future__ import annotations

import platform
from collections.abc import Generator
from dataclasses import dataclass, replace
from pathlib import Path

from conch.messages import GenerationOptions, ProviderEvent, Usage
from conch.policy import Decision, ExecutionMode, PolicyContext, Risk, Verdict, assess
from conch.providers.base import Provider, respond
from conch.shell.context import EXEC_TAG, Context, Eviction, suggested_commands

__all__ = ["SYSTEM_PROMPT", "Reply", "judge", "model_turn", "needs_yes", "shown_reasons"]

SYSTEM_PROMPT = """\
You are conch, an assistant inside the user's shell. The user types shell commands and \
questions in one terminal. The commands they ran since their last message open it, each in \
an [exec output] block with its exit code and the end of its output, so you can see what \
happened and why it failed. Help them run commands, read output, and write and debug code.
When you suggest a shell command, put it on a line of its own beginning with exactly \
"CMD: " so conch can offer to run it; the user confirms every command before it runs.
Be concise. Prefer concrete actions over explanations unless asked."""

# Reasons the policy gives for every command judged as unsafe mode judges: true of every
# line the shell runs, so they say nothing about this one.
_GENERIC_REASONS = ("Confirmation required (unsafe mode).",)
_GENERIC_SUFFIX = " allowed in unsafe mode."


@dataclass(frozen=True, slots=True)
class Reply:
    """What a model turn produced: the reply's ``text``, the user turn as it was ``sent``
    (the ``[exec output]`` blocks first), the tokens it used, what the context window had
    to evict, and the ``commands`` the reply suggests."""

    text: str
    sent: str
    usage: Usage
    eviction: Eviction | None
    commands: tuple[str, ...]


def system_prompt(shell: str) -> str:
    """The shell's system prompt, with the user's shell and operating system."""
    return f"{SYSTEM_PROMPT}\nThe user's shell is {shell} on {platform.system()}."


def model_turn(
    context: Context, provider: Provider, text: str, options: GenerationOptions
) -> Generator[ProviderEvent, None, Reply]:
    """Ask ``provider`` about ``text`` with ``context``; yields the reply's events, stores
    the reply in ``context`` and returns it. When the reply fails or is stopped, the question
    stays in ``context`` unanswered and joins the next one."""
    prompt = context.ask(text)
    # A small model imitates the [exec output] blocks it is shown and invents a command's
    # output after suggesting it: the reply ends where such a block would begin.
    options = replace(options, stop=(*options.stop, EXEC_TAG))
    response = yield from respond(provider, prompt.messages, options)
    sent = context.turns[-1].content
    context.answer(response.text)
    commands = tuple(suggested_commands(response.text))
    return Reply(response.text, sent, response.usage, prompt.eviction, commands)


def judge(command: str, cwd: str | Path) -> Verdict:
    """The policy's verdict on ``command`` about to run in the user's shell in ``cwd``."""
    context = PolicyContext(unsafe=True, mode=ExecutionMode.INTERACTIVE, cwd=Path(cwd))
    return assess(command, context)


def needs_yes(verdict: Verdict, confirm: bool) -> bool:
    """Whether to ask before the command runs: always with ``confirm`` (``shell.confirm_cmd``),
    otherwise unless it only reads. A rejected command never runs, asked or not."""
    return confirm or verdict.decision is Decision.REJECT or verdict.risk is not Risk.READ_ONLY


def shown_reasons(verdict: Verdict) -> list[str]:
    """The verdict's reasons worth showing with the command (not those true of every line
    that runs in a shell)."""
    return [
        reason
        for reason in verdict.reasons
        if reason not in _GENERIC_REASONS and not reason.endswith(_GENERIC_SUFFIX)
    ]
