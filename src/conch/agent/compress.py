"""A recap the model writes of a conversation, to take its place (``Session.compress``).

Pruning drops old turns when the context fills, leaving one line that says what went;
a recap keeps what mattered instead, in the model's own words, and frees the context for
what comes next. The model is given the conversation as a transcript (each message clipped,
the oldest left out where it would not fit) under a system prompt of its own, with no tools:
the agent's prompt would have it answer with a tool call or a JSON step. The conversation
then becomes the exchange that made the recap: the request for it, and the recap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from conch.agent.conversation import PRUNE_AT
from conch.agent.toolcalls import render_call
from conch.errors import ModelOutputError
from conch.messages import GenerationOptions, Message, ProviderEvent
from conch.providers.base import Provider, complete


class Recapped(Protocol):
    """What ``compress`` needs of a session (``conch.agent.session.Session``), named here
    so that this module, which the session imports, does not import it back."""

    provider: Provider
    options: GenerationOptions
    context_tokens: int

    @property
    def history(self) -> tuple[Message, ...]: ...

    def restore(self, history: Iterable[Message]) -> object: ...


RECAP_SYSTEM = (
    "You write recaps of conversations between a user and an assistant that uses tools. "
    "A recap replaces the conversation, so keep everything needed to go on: what the user "
    "asked for and decided, the facts found (file names, paths, numbers, commands and "
    "their results), what was done and what is left to do. Leave out greetings and "
    "repetition. Write plain sentences or a short list, no more than 300 words."
)
RECAP_REQUEST = "Write a recap of our conversation so far, to continue from."
# What one message may take of the transcript, and the characters a token is taken for.
MESSAGE_CHARS = 2000
CHARS_PER_TOKEN = 3
_LEFT_OUT = "[... {n} earlier messages left out ...]"
_OWN_ROOM = 200  # tokens of the recap's system prompt and request


def transcript(history: Sequence[Message], max_chars: int) -> str:
    """``history`` as text (``User:``, ``Assistant:``, tool calls and results), each message
    clipped to ``MESSAGE_CHARS``. Where it is longer than ``max_chars``, the first message
    stays and the oldest after it are left out, with a line that says how many."""
    parts = [_line(message) for message in history]
    if not parts:
        return ""
    first, rest = parts[0], parts[1:]
    size = len(first) + sum(len(p) + 2 for p in rest)
    left_out = 0
    while rest and size > max_chars:
        size -= len(rest.pop(0)) + 2
        left_out += 1
    marker = [_LEFT_OUT.format(n=left_out)] if left_out else []
    return "\n\n".join([first, *marker, *rest])


def write_recap(
    provider: Provider,
    history: Sequence[Message],
    options: GenerationOptions,
    budget_tokens: int,
    on_event: Callable[[ProviderEvent], None] | None = None,
) -> str:
    """The recap ``provider``'s model writes of ``history``, within ``budget_tokens`` for
    the transcript; ``on_event`` hears the reply as it streams. ModelOutputError when the
    model writes nothing."""
    text = transcript(history, max(budget_tokens, 256) * CHARS_PER_TOKEN)
    messages = [
        Message("system", RECAP_SYSTEM),
        Message("user", f"The conversation:\n\n{text}\n\n{RECAP_REQUEST}"),
    ]
    plain = replace(options, json_schema=None, grammar=None, stop=(), logprobs=False)
    reply = complete(provider, messages, plain, on_event=on_event)
    recap = reply.text.strip()
    if not recap:
        raise ModelOutputError("the model wrote no recap; the conversation is kept as it was")
    return recap


def compress(
    session: Recapped, on_event: Callable[[ProviderEvent], None] | None = None
) -> str | None:
    """Replace ``session``'s conversation with the recap its model writes of it (the
    request for the recap, and the recap); the recap, or None when there is no
    conversation. The transcript gets what the pruning budget leaves after the recap and
    its instructions."""
    history = session.history
    if not history:
        return None
    budget = int(session.context_tokens * PRUNE_AT) - session.options.max_tokens - _OWN_ROOM
    recap = write_recap(session.provider, history, session.options, budget, on_event)
    session.restore(recap_history(recap))
    return recap


def recap_history(recap: str) -> list[Message]:
    """The conversation a recap leaves: the request for it, and the recap."""
    return [Message("user", RECAP_REQUEST), Message("assistant", recap)]


def _line(message: Message) -> str:
    if message.role == "tool":
        label = f"Result of {message.name}" if message.name else "Tool result"
        return f"{label}: {_clip(message.content)}"
    who = "User" if message.role == "user" else "Assistant"
    calls = [render_call(call) for call in message.tool_calls]
    body = "\n".join(p for p in [message.content.strip(), *calls] if p)
    return f"{who}: {_clip(body)}"


def _clip(text: str) -> str:
    if len(text) <= MESSAGE_CHARS:
        return text
    half = MESSAGE_CHARS // 2
    return f"{text[:half]} [...] {text[-half:]}"
