"""Answering a question: a few sentences of prose, and at most one suggested command.

A question is asked ABOUT something (an error, a command, a concept, piped output) rather
than FOR something (``conch.command.intent`` tells them apart). The model answers in plain
prose, briefly (``ANSWER_MAX_TOKENS``); when one command would help it ends with that command
in a code block. The command is taken out of the prose, judged by the safety policy like any
other (``conch.policy.assess``) and returned with its verdict. Nothing here runs it.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass

from conch.command.request import RequestContext, sanitize
from conch.errors import ModelOutputError
from conch.messages import GenerationOptions, Message, ProviderEvent, Usage
from conch.policy import PolicyContext, Verdict, assess
from conch.providers.base import EventCallback, Provider, drain, respond
from conch.validate.extract import FENCE, SHELL_LANGS, fences

ANSWER_PROMPT = (
    "You are conch, an expert on the Unix shell. Answer the user's question in two or three "
    "plain sentences for the user's platform described below: no lists, no headings, no bold. "
    "When input was piped to conch, the question is about that input. If one shell command "
    "would help the user check or fix something, put it last, alone in a ```sh code block; "
    "otherwise give no command."
)

# Two worked answers show the form wanted: short prose, a command only when it helps.
EXAMPLES = (
    (
        "Input piped to conch (it may be truncated):\nbash: ./deploy.sh: Permission denied\n\n"
        "Question: why does this fail",
        "The script exists, but it does not have the execute permission, so the shell refuses "
        "to run it. Give it that permission and run it again:\n```sh\nchmod +x deploy.sh\n```",
    ),
    (
        "Question: what is the difference between > and >>",
        "Both send a command's output to a file. > replaces what the file held, while >> adds "
        "to its end and keeps what was there.",
    ),
)

# A few sentences and one command fit; the cap keeps an answer to seconds on a small CPU.
ANSWER_MAX_TOKENS = 200

_ONE_LINE_FENCE = re.compile(r"```([^`\n]+)```")
_PROMPT_SIGN = re.compile(r"^\s*[$>]\s+")


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer to a question.

    ``text`` is the prose without its code blocks; ``command`` the one command it suggests
    (None when it suggests none, or more than one line of code), with the policy's
    ``verdict`` on it; ``reply`` is the model's reply as it came.
    """

    text: str
    command: str | None
    verdict: Verdict | None
    reply: str
    usage: Usage


def answer(
    provider: Provider,
    ctx: RequestContext,
    platform_description: str,
    policy: PolicyContext | None = None,
    on_event: EventCallback | None = None,
    max_tokens: int = ANSWER_MAX_TOKENS,
) -> Answer:
    """Answer the question in ``ctx`` (temperature 0); ``on_event`` sees the reply stream."""
    return drain(answer_events(provider, ctx, platform_description, policy, max_tokens), on_event)


def answer_events(
    provider: Provider,
    ctx: RequestContext,
    platform_description: str,
    policy: PolicyContext | None = None,
    max_tokens: int = ANSWER_MAX_TOKENS,
) -> Generator[ProviderEvent, None, Answer]:
    """``answer`` as a stream: the model's events as they come, then the ``Answer``.

    The suggested command is judged with ``policy`` (the default context when None).
    """
    messages = answer_messages(ctx, platform_description)
    options = GenerationOptions(temperature=0.0, max_tokens=max_tokens)
    response = yield from respond(provider, messages, options)
    reply = response.text.strip()
    cut = response.finish_reason == "length" or response.usage.completion_tokens >= max_tokens
    text, command = split_suggestion(_whole_sentences(reply) if cut else reply)
    if not text and command is None:
        raise ModelOutputError("the model returned an empty answer; retry")
    verdict = assess(command, policy or PolicyContext()) if command is not None else None
    return Answer(text, command, verdict, reply, response.usage)


def answer_messages(ctx: RequestContext, platform_description: str) -> list[Message]:
    """The system prompt with the platform, the worked answers, then one user turn: what goes
    with the question (piped input, file samples, the scope), the question last."""
    system = f"{ANSWER_PROMPT}\n\nThe user's platform:\n{platform_description}"
    examples: list[Message] = []
    for question, reply in EXAMPLES:
        examples += [Message("user", question), Message("assistant", reply)]
    parts: list[str] = []
    if ctx.stdin_text:
        parts.append(f"Input piped to conch (it may be truncated):\n{ctx.stdin_text}")
    for name, sample in ctx.peek_samples:
        parts.append(f"The start of the file {name}:\n{sample}")
    if ctx.scope == "." and ctx.scope_listing is not None:
        parts.append(f"The current directory holds:\n{ctx.scope_listing}")
    elif ctx.scope is not None:
        parts.append(f"The question concerns: {sanitize(ctx.scope)}")
    parts.append(f"Question: {sanitize(ctx.request)}")
    return [Message("system", system), *examples, Message("user", "\n\n".join(parts))]


def split_suggestion(reply: str) -> tuple[str, str | None]:
    """The prose of ``reply`` without its code blocks, and the one command of its first
    shell code block (None when there is none, or when that block holds several commands)."""
    command: str | None = None
    seen = False
    # A block written on one line becomes one of its own lines, as ``FENCE`` reads blocks.
    reply = _ONE_LINE_FENCE.sub(lambda m: f"\n```\n{m.group(1).strip()}\n```\n", reply)
    for fence in fences(reply):
        if seen or fence.lang.lower() not in SHELL_LANGS:
            continue
        seen = True
        body = fence.body.replace("\\\n", " ")
        lines = [_PROMPT_SIGN.sub("", ln).strip() for ln in body.split("\n")]
        lines = [ln for ln in lines if ln and not ln.startswith("#")]
        if len(lines) == 1:
            command = lines[0]
    prose = FENCE.sub("\n", reply)
    prose = re.sub(r"[ \t]+\n", "\n", prose)
    prose = re.sub(r"\n{3,}", "\n\n", prose).strip()
    return prose, command


def _whole_sentences(reply: str) -> str:
    """A reply the token cap cut short, without its unfinished last sentence (and without a
    code block the cap cut open, whose command may be incomplete)."""
    if reply.count("```") % 2:
        reply = reply[: reply.rindex("```")]
    ends = [m.end() for m in re.finditer(r"[.!?:](?=\s|$)|```(?=\s*$)", reply)]
    return reply[: ends[-1]] if ends else reply
