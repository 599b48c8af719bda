"""The tools under test that live in this repository: conch itself and the bare model.

Every tool talks to the same OpenAI-compatible server at temperature 0.
"""

from __future__ import annotations

import os
import re
import time

from benchmarks.accuracy.candidate import Candidate, Task
from benchmarks.accuracy.candidate import looks_refused as looks_like_refusal
from conch.errors import ConchError, ModelOutputError
from conch.messages import GenerationOptions, Message
from conch.providers.base import Provider, complete
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


def conch_candidate(provider: Provider, request: str) -> Candidate:
    """conch's answer to ``request``, as ``conch --print --unsafe REQUEST`` would produce it.

    This is the one place the benchmark enters conch: ``conch.propose.propose``, the same call
    the CLI makes, with the default settings (few-shot examples, validation with
    ``model_check: on_issues``, no auto_fix), this machine's platform, temperature 0.
    """
    from conch.context import RequestContext
    from conch.paths import Paths
    from conch.platform import detect_platform
    from conch.policy import PolicyContext
    from conch.propose import propose
    from conch.settings import Settings

    settings = Settings()
    cache = Paths.default().cache_dir
    started = time.monotonic()
    try:
        proposal = propose(
            provider,
            settings.default_prompt,
            detect_platform(cache, dict(os.environ)),
            RequestContext(request=request),
            settings,
            PolicyContext(unsafe=True),
            cache,
        )
    except ModelOutputError as exc:
        seconds = time.monotonic() - started
        message = str(exc)
        return Candidate(None, "", seconds, error=message, refused="prose" in message)
    except ConchError as exc:
        return Candidate(None, "", time.monotonic() - started, error=f"{PROVIDER_ERROR}{exc}")
    seconds = time.monotonic() - started
    if looks_like_refusal(proposal.command):
        return Candidate(None, proposal.generated.reply, seconds, refused=True)
    return Candidate(proposal.command, proposal.generated.reply, seconds)


class ConchGenerator:
    """conch's one-shot pipeline, in-process."""

    name = "conch"

    def __init__(self, base_url: str, model: str | None) -> None:
        self.provider = make_provider(base_url, model)

    def generate(self, task: Task) -> Candidate:
        return conch_candidate(self.provider, task.nl)


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
        command = strip_markdown(raw) if self.markdown else raw.strip()
        if not command:
            return Candidate(None, raw, seconds, error="empty reply")
        if looks_like_refusal(command):
            return Candidate(None, raw, seconds, refused=True)
        if "```" in command:
            return Candidate(None, raw, seconds, error="markdown code fence in the reply")
        return Candidate(command, raw, seconds)
