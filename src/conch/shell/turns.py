"""A model turn of ``conch shell``, and what the policy says of the commands it suggests.

``model_turn`` asks the model with the ``Context`` (the turns so far, and the output of the
commands that ran since the last question as ``[exec output]`` blocks), streams the events
of its reply without the command output the model invents (the reply ends where an
``[exec output]`` block would begin, and ``conch.shell.reply.ReplyFilter`` leaves out the
rest), stores the reply as shown and returns it with the commands it suggests. ``judge`` is
the safety policy's verdict on a suggested command: it would run in the user's own shell, so
it is judged as unsafe mode judges (shell syntax allowed, the denylist and parse failures
enforced); ``suggestion_ruling`` says whether the user must be asked before it runs.
``repair_turn`` shows the model what is wrong with a suggestion (``conch.shell.check``) and
asks once for a corrected command, as the one-shot pipeline's repair does.
"""

from __future__ import annotations

import platform
from collections.abc import Container, Generator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    ProviderEvent,
    Response,
    TextDelta,
    Usage,
)
from conch.policy import ExecutionMode, PolicyContext, Verdict, assess
from conch.policy.confirm import ConfirmOptions, command_ruling
from conch.policy.rules import Permissions, Ruling
from conch.providers.base import Provider, respond
from conch.shell.context import CMD, EXEC_TAG, Context, Eviction, suggested_commands
from conch.shell.diffs import FILE_PROMPT, Proposed, proposed_files
from conch.shell.reply import ReplyFilter

__all__ = [
    "ANSWER_AGAIN",
    "REPAIR_TOKENS",
    "SYSTEM_PROMPT",
    "Repaired",
    "Reply",
    "judge",
    "model_turn",
    "repair_turn",
    "shell_policy",
    "shown_reasons",
    "suggestion_ruling",
]

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
#: The most a corrected command may be, in tokens.
REPAIR_TOKENS = 256
#: Said when a whole reply was made-up command output (a replay of the transcript).
ANSWER_AGAIN = (
    "That repeats command output, which conch shows itself. Answer my question in your own "
    "words, or suggest a command on a CMD: line."
)


@dataclass(frozen=True, slots=True)
class Reply:
    """What a model turn produced: the reply's ``text`` as shown, the user turn as it was
    ``sent`` (the ``[exec output]`` blocks first), the tokens it used, what the context window
    had to evict, the ``commands`` the reply suggests, how many lines of made-up command
    output were ``dropped`` from it, and the ``files`` it proposes (``conch.shell.diffs``:
    their code blocks are not among its commands)."""

    text: str
    sent: str
    usage: Usage
    eviction: Eviction | None
    commands: tuple[str, ...]
    dropped: int = 0
    files: tuple[Proposed, ...] = ()


@dataclass(frozen=True, slots=True)
class Repaired:
    """The model's correction of a suggested ``command``, and the tokens it used."""

    command: str
    usage: Usage


def system_prompt(shell: str, files: bool = False) -> str:
    """The shell's system prompt, with the user's shell and operating system; with
    ``files``, how to propose a file (``conch.shell.diffs.FILE_PROMPT``)."""
    prompt = f"{SYSTEM_PROMPT}\nThe user's shell is {shell} on {platform.system()}."
    return f"{prompt}\n{FILE_PROMPT}" if files else prompt


def model_turn(
    context: Context,
    provider: Provider,
    text: str,
    options: GenerationOptions,
    known: Container[str] | None = None,
    files: bool = False,
) -> Generator[ProviderEvent, None, Reply]:
    """Ask ``provider`` about ``text`` with ``context``; yields the reply's events (its text
    without made-up command output), stores the reply as shown in ``context`` and returns
    it. A reply that was nothing but made-up output is asked for once more (``ANSWER_AGAIN``,
    after it), and that second reply is the answer. When the reply fails or is stopped, the
    question stays in ``context`` unanswered and joins the next one. ``known``: the command
    names of the shell (``conch.shell.route.known_commands``), for code blocks without a
    language. ``files``: read the files the reply proposes (``conch.shell.diffs``)."""
    ran = [record.command for record in context.pending]
    prompt = context.ask(text)
    # A small model imitates the [exec output] blocks it is shown and invents a command's
    # output after suggesting it: the reply ends where such a block would begin, and what it
    # invents before that is left out.
    options = replace(options, stop=(*options.stop, EXEC_TAG))
    shown = ReplyFilter(ran, known)
    response = yield from _filtered(respond(provider, prompt.messages, options), shown)
    usage, dropped = response.usage, shown.dropped
    if dropped and not shown.text.strip():
        # Nothing but made-up output: once more, the model shown what it did.
        again = [
            *prompt.messages,
            Message("assistant", response.text),
            Message("user", ANSWER_AGAIN),
        ]
        shown = ReplyFilter(ran, known)
        response = yield from _filtered(respond(provider, again, options), shown)
        usage = Usage(
            usage.prompt_tokens + response.usage.prompt_tokens,
            usage.completion_tokens + response.usage.completion_tokens,
        )
        dropped += shown.dropped
    sent = context.turns[-1].content
    context.answer(shown.text)
    proposed = tuple(proposed_files(shown.text)) if files else ()
    skip = [file.span for file in proposed]
    commands = tuple(suggested_commands(shown.text, known, skip))
    return Reply(shown.text, sent, usage, prompt.eviction, commands, dropped, proposed)


def repair_turn(
    context: Context,
    provider: Provider,
    command: str,
    problems: Sequence[str],
    options: GenerationOptions,
) -> Generator[ProviderEvent, None, Repaired]:
    """Ask once for a corrected ``command``, the model shown its ``problems`` after the
    conversation so far (``context``, whose last turn is the reply that suggested it);
    the conversation itself is left as it was. ``ModelOutputError`` when the reply holds no
    command."""
    from conch.command.generate import REPAIR_PROMPT
    from conch.validate.extract import ONE_LINE_GRAMMAR, extract_command

    messages = context.messages()
    if not messages or messages[-1].role != "assistant":
        raise ValueError("no reply to correct: the last turn is not the model's")
    asked = [
        *messages[:-1],
        Message("assistant", f"{CMD}{command}"),
        Message("user", REPAIR_PROMPT.format(error="\n".join(problems))),
    ]
    repair = GenerationOptions(
        temperature=options.temperature,
        max_tokens=REPAIR_TOKENS,
        stop=("\n\n",),
        grammar=ONE_LINE_GRAMMAR,
        seed=options.seed,
    )
    response = yield from respond(provider, asked, repair)
    return Repaired(extract_command(response.text), response.usage)


def _filtered(
    events: Generator[ProviderEvent, None, Response], shown: ReplyFilter
) -> Generator[ProviderEvent, None, Response]:
    """``events`` with their text passed through ``shown``."""
    while True:
        try:
            event = next(events)
        except StopIteration as stop:
            rest = shown.end()
            if rest:
                yield TextDelta(rest)
            return stop.value  # type: ignore[no-any-return]
        if isinstance(event, TextDelta):
            text = shown.feed(event.text)
            if text:
                yield TextDelta(text)
            continue
        if isinstance(event, Finished):
            rest = shown.end()
            if rest:
                yield TextDelta(rest)
        yield event


def shell_policy(cwd: str | Path) -> PolicyContext:
    """The policy context of a command about to run in the user's own shell in ``cwd``:
    unsafe mode's (shell syntax allowed; the denylist and parse failures enforced), asked
    about as interactive mode asks."""
    return PolicyContext(unsafe=True, mode=ExecutionMode.INTERACTIVE, cwd=Path(cwd))


def judge(command: str, cwd: str | Path) -> Verdict:
    """The policy's verdict on ``command`` about to run in the user's shell in ``cwd``."""
    return assess(command, shell_policy(cwd))


def suggestion_ruling(
    command: str, verdict: Verdict, confirm: bool, permissions: Permissions | None = None
) -> Ruling:
    """The one rule (``conch.policy.confirm.command_ruling``) for a suggested command, with
    the user's ``permissions``: with ``confirm`` (``shell.confirm_cmd``) every suggestion is
    asked about (interactive mode); without it, one that only reads runs without a question,
    contained (``ShellParts.run_contained``), and the rest are asked about
    (restricted-autonomous). A rejected command is refused, asked or not."""
    mode = ExecutionMode.INTERACTIVE if confirm else ExecutionMode.RESTRICTED
    options = ConfirmOptions(mode=mode, permissions=permissions)
    return command_ruling(command, verdict, options, mode=mode)


def shown_reasons(verdict: Verdict) -> list[str]:
    """The verdict's reasons worth showing with the command (not those true of every line
    that runs in a shell)."""
    return [
        reason
        for reason in verdict.reasons
        if reason not in _GENERIC_REASONS and not reason.endswith(_GENERIC_SUFFIX)
    ]
