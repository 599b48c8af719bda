"""The bare-model baselines, and what every tool in this repository shares.

Every tool talks to the same OpenAI-compatible server at temperature 0. conch itself is in
``conch_tool.py``.
"""

from __future__ import annotations

import re
import time

from benchmarks.accuracy.candidate import Candidate, Task
from benchmarks.accuracy.candidate import looks_refused as looks_like_refusal
from conch.errors import ConchError
from conch.messages import GenerationOptions, Message
from conch.providers.base import complete
from conch.providers.openai import OpenAIProvider

REQUEST_TIMEOUT = 120.0
# Marks a failure of the server rather than an answer (not cached, so a resumed run retries).
PROVIDER_ERROR = "provider error: "
BARE_SYSTEM_PROMPT = "Translate the request into a bash command. Reply with the command only."
_INLINE = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.S)


def make_provider(base_url: str, model: str | None) -> OpenAIProvider:
    """conch's own OpenAI-compatible provider pointed at the benchmark's server."""
    return OpenAIProvider(base_url, model, api_key=None, timeout=REQUEST_TIMEOUT, max_retries=2)


def strip_markdown(reply: str) -> str:
    """The body of the first markdown code fence in ``reply``, else the reply without the
    inline-code backticks around all of it, else the reply itself."""
    match = _FENCE.search(reply)
    if match:
        return match.group(1).strip()
    whole = _INLINE.fullmatch(reply.strip())
    return (whole.group(1) if whole else reply).strip()


class BareGenerator:
    """The bare model: a minimal prompt, the reply taken as the command after stripping spaces.

    With ``markdown=True`` (``bare+md``) one markdown code fence (or inline code span around the
    whole reply) is stripped first, as in the paper's "with markdown parsing" column. Both variants share one model reply per request.
    """

    _replies: dict[tuple[str, str], tuple[str, float]] = {}  # noqa: RUF012 - shared on purpose

    def __init__(self, base_url: str, model: str | None, markdown: bool = False) -> None:
        self.provider = make_provider(base_url, model)
        self.markdown = markdown
        self.name = "bare+md" if markdown else "bare"
        self.base_url = base_url

    def reply(self, request: str) -> tuple[str, float]:
        """The model's raw reply to ``request`` and how long it took (shared across variants)."""
        key = (self.base_url, request)
        if key not in self._replies:
            messages = [Message("system", BARE_SYSTEM_PROMPT), Message("user", request)]
            options = GenerationOptions(temperature=0.0, max_tokens=256)
            started = time.monotonic()
            text = complete(self.provider, messages, options).text
            self._replies[key] = (text, time.monotonic() - started)
        return self._replies[key]

    def generate(self, task: Task) -> Candidate:
        started = time.monotonic()
        try:
            raw, seconds = self.reply(task.nl)
        except ConchError as exc:
            return Candidate(None, "", time.monotonic() - started, error=f"{PROVIDER_ERROR}{exc}")
        return command_from_reply(raw, seconds, self.markdown)


def command_from_reply(raw: str, seconds: float, markdown: bool) -> Candidate:
    """The command a reply gives, as the bare baselines take it: the reply stripped of spaces
    (``markdown``: of one code fence or inline code span first, as ``bare+md``). An empty
    reply, or one still holding a fence, is an extraction failure; prose that declines is a
    refusal. One rule for every tool whose answer is free text."""
    command = strip_markdown(raw) if markdown else raw.strip()
    if not command:
        return Candidate(None, raw, seconds, error="empty reply")
    if looks_like_refusal(command):
        return Candidate(None, raw, seconds, refused=True)
    if "```" in command:
        return Candidate(None, raw, seconds, error="markdown code fence in the reply")
    return Candidate(command, raw, seconds)
