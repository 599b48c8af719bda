"""The conversation an agent keeps: its messages, their token count, and pruning.

Tokens are counted by a pluggable counter: the model's tokenizer where the provider has one
(the embedded engine, the model service, a llama.cpp server: ``tokenizer_counter``), else an
estimate of four characters per token. When the conversation outgrows its budget,
``prune`` drops the oldest turns but always keeps the system prompt, the original
instruction, the current instruction and the last few turns, and puts one summary line where
the dropped turns were. A turn here is a user message, or an assistant message together with
the results of the tools it called: the two are never split, so a tool result always follows
its call.

The messages stay valid for strict chat templates: never two user messages in a row, and a
tool message only after the assistant message that called it (``alternation_problems``
checks both). ``close_turn`` restores that after a turn stops early (Ctrl+C, an error).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from conch import sanitize
from conch.agent.events import Pruned
from conch.agent.toolcalls import json_step_messages
from conch.errors import ConchError
from conch.messages import Message, ToolCall, ToolResult

TokenCounter = Callable[[str], int]
# Per-message cost of the chat template's role markers, roughly.
MESSAGE_OVERHEAD = 4
# The share of the context window a session's conversation may fill before it is pruned.
PRUNE_AT = 0.8
# Room kept for the summary line when deciding how much to drop.
_SUMMARY_ROOM = 48
# How many counted texts a tokenizer counter remembers.
_REMEMBERED = 4096


def estimate_tokens(text: str) -> int:
    """About four characters per token: the estimate used when no tokenizer is at hand."""
    return (len(text) + 3) // 4


def tokenizer_counter(count: Callable[[str], int | None]) -> TokenCounter:
    """A counter asking ``count`` (a model's tokenizer, which may answer None: not loaded, not
    offered) and estimating where it cannot say. Each text the tokenizer counted is
    remembered, so a conversation asks it only about new messages."""
    known: dict[str, int] = {}

    def counter(text: str) -> int:
        if not text:
            return 0
        if text in known:
            return known[text]
        try:
            value = count(text)
        except ConchError:
            value = None
        if value is None:
            return estimate_tokens(text)
        if len(known) >= _REMEMBERED:
            known.clear()
        known[text] = value
        return value

    return counter


def message_tokens(message: Message, counter: TokenCounter = estimate_tokens) -> int:
    """The tokens ``message`` costs: its text, its tool calls and the role markers."""
    total = counter(message.content) + MESSAGE_OVERHEAD
    for call in message.tool_calls:
        total += counter(call.name) + counter(call.arguments) + MESSAGE_OVERHEAD
    return total


class Conversation:
    """A system prompt and the messages after it.

    ``keep_turns``: how many of the latest turns pruning always keeps.
    """

    def __init__(
        self, system: str = "", *, counter: TokenCounter = estimate_tokens, keep_turns: int = 5
    ) -> None:
        self.system = system
        self.counter = counter
        self.keep_turns = keep_turns
        self._messages: list[Message] = []
        self._request: Message | None = None
        self._earlier: str | None = None
        self._summary: Message | None = None
        self._dropped = 0
        self._dropped_requests = 0
        self._dropped_calls: Counter[str] = Counter()

    @property
    def messages(self) -> tuple[Message, ...]:
        """The messages after the system prompt, oldest first."""
        return tuple(self._messages)

    def add(self, message: Message) -> None:
        """Append ``message`` (a system message belongs in ``system``, not here)."""
        if message.role == "system":
            raise ValueError("the system prompt is the conversation's `system`, not a message")
        self._messages.append(message)

    def add_request(self, text: str) -> Message:
        """Append the user's ``text`` as the request the turn works on: pruning keeps it
        whatever else goes, and the loop's own notes to the model do not replace it."""
        if self._request is not None:
            self._earlier = self._request.content
        self._request = Message("user", text)
        self.add(self._request)
        return self._request

    @property
    def earlier_request(self) -> str | None:
        """The text of the request ``add_request`` added before the current one (the step
        before this one, when an instruction was split), None when there was none."""
        return self._earlier

    @property
    def request(self) -> Message | None:
        """The request being worked on: the last one ``add_request`` added, else (a
        conversation restored from a history) the last user message."""
        if self._request is not None and any(m is self._request for m in self._messages):
            return self._request
        return next((m for m in reversed(self._messages) if m.role == "user"), None)

    def request_text(self) -> str | None:
        """The text of ``request``."""
        request = self.request
        return None if request is None else request.content

    def clear(self) -> None:
        """Forget every message (the system prompt stays)."""
        self._messages.clear()
        self._request = self._earlier = None
        self._summary = None
        self._dropped = self._dropped_requests = 0
        self._dropped_calls.clear()

    def wire(self, *, json_steps: bool = False) -> list[Message]:
        """What the model is sent: the system message, then the messages; with
        ``json_steps``, tool calls and results written as plain text."""
        head = [Message("system", self.system)] if self.system else []
        body = json_step_messages(self._messages) if json_steps else list(self._messages)
        return head + body

    def tokens(self) -> int:
        """The whole conversation's size in tokens, system prompt included."""
        total = message_tokens(Message("system", self.system), self.counter) if self.system else 0
        return total + sum(message_tokens(m, self.counter) for m in self._messages)

    def prune(self, budget: int) -> Pruned | None:
        """Drop the oldest turns until the conversation fits ``budget`` tokens; None when it
        already fits or nothing may be dropped.

        Kept always: the system prompt, the first user message (the original instruction),
        the request being worked on (``request``: in a chat, the latest question, however
        many tool calls came after it), the last user message and the last ``keep_turns``
        turns. What is dropped is replaced by one summary line right after the original
        instruction (an earlier summary is folded into it).
        """
        before = self.tokens()
        if before <= budget:
            return None
        groups = self._groups()
        users = [i for i, g in enumerate(groups) if self._messages[g[0]].role == "user"]
        keep = set(range(max(len(groups) - self.keep_turns, 0), len(groups)))
        keep.update(users[:1] + users[-1:])
        request = self.request
        keep.update(i for i, g in enumerate(groups) if any(self._messages[j] is request for j in g))
        total = before
        dropped: list[list[int]] = []
        for index, group in enumerate(groups):
            if total + _SUMMARY_ROOM <= budget:
                break
            if index in keep or self._messages[group[0]] is self._summary:
                continue
            dropped.append(group)
            total -= sum(message_tokens(self._messages[i], self.counter) for i in group)
        if not dropped:
            return None
        gone = {i for group in dropped for i in group}
        for i in sorted(gone):
            message = self._messages[i]
            self._dropped += 1
            self._dropped_requests += message.role == "user"
            self._dropped_calls.update(call.name for call in message.tool_calls)
        anchor = self._messages[groups[users[0]][0]] if users else None
        kept = [m for i, m in enumerate(self._messages) if i not in gone and m is not self._summary]
        self._summary = Message("assistant", self._summary_text())
        at = next((i + 1 for i, m in enumerate(kept) if m is anchor), 0)
        kept.insert(at, self._summary)
        self._messages = kept
        return Pruned(len(gone), self._summary.content, before, self.tokens())

    def close_turn(self, note: str) -> None:
        """Make the messages valid again after a turn stopped early: every tool call left
        without a result gets one saying it did not run, and the turn ends with an
        assistant message (``note``)."""
        pending = self._unanswered()
        for call in pending:
            reason = f"Error: not run ({sanitize.one_line(note)})"
            self._messages.append(ToolResult(call.id, call.name, reason, True).to_message())
        last = self._messages[-1] if self._messages else None
        if last is not None and (last.role != "assistant" or last.tool_calls):
            self._messages.append(Message("assistant", note))

    def _unanswered(self) -> list[ToolCall]:
        for index in range(len(self._messages) - 1, -1, -1):
            message = self._messages[index]
            if message.role == "assistant" and message.tool_calls:
                answered = {m.tool_call_id for m in self._messages[index + 1 :] if m.role == "tool"}
                return [c for c in message.tool_calls if c.id not in answered]
            if message.role == "user":
                break
        return []

    def _groups(self) -> list[list[int]]:
        """Message indexes by turn: a tool message joins the turn of its call."""
        groups: list[list[int]] = []
        for index, message in enumerate(self._messages):
            if message.role == "tool" and groups:
                groups[-1].append(index)
            else:
                groups.append([index])
        return groups

    def _summary_text(self) -> str:
        parts = [f"{self._dropped} earlier messages were dropped to fit the context"]
        details: list[str] = []
        if self._dropped_requests:
            details.append(f"{self._dropped_requests} user requests")
        calls = sum(self._dropped_calls.values())
        if calls:
            names = ", ".join(
                f"{sanitize.name(name)} x{n}" for name, n in self._dropped_calls.most_common(8)
            )
            details.append(f"{calls} tool calls: {names}")
        if details:
            parts.append(f" ({'; '.join(details)})")
        return "[" + "".join(parts) + ".]"


def alternation_problems(messages: Sequence[Message]) -> list[str]:
    """What a strict chat template would refuse in ``messages``: a system message after
    the first, two user messages in a row, a tool message that does not follow its call,
    a tool call left without its result. Empty when they are valid."""
    problems: list[str] = []
    open_calls: set[str] = set()
    previous: Message | None = None
    for index, message in enumerate(messages):
        if message.role == "system" and index > 0:
            problems.append(f"message {index}: a system message after the first")
        if message.role == "user" and previous is not None and previous.role == "user":
            problems.append(f"message {index}: two user messages in a row")
        if message.role == "tool":
            if message.tool_call_id not in open_calls:
                problems.append(f"message {index}: a tool result without its call just before")
            open_calls.discard(message.tool_call_id or "")
        else:
            if open_calls:
                problems.append(f"message {index}: tool calls left without results")
            open_calls = {c.id for c in message.tool_calls}
        previous = message
    if open_calls:
        problems.append("the last tool calls have no results")
    return problems
